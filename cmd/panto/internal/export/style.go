package export

// css is the page's one stylesheet: readable on screen, light, monospace
// for tool input and output, and fit to print. It loads nothing.
const css markup = `body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;max-width:62rem;margin:0 auto;padding:1rem 1.25rem}
h1{font-size:1.4rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}h3{font-size:1rem;margin:.5rem 0}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid #d1d9e0;border-radius:4px;padding:.4rem .6rem;margin:.3rem 0}
a{color:#0969da}
dl.hd{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.5rem 0}dl.hd dt{color:#59636e}dl.hd dd{margin:0}
nav{font-size:13px;color:#59636e}
.t{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.m{border-left:3px solid #d1d9e0;padding:.1rem .8rem;margin:.8rem 0}
.user{border-color:#0969da}.assistant{border-color:#1a7f37}.tool{border-color:#8250df}
.h,.ev{font-size:13px;color:#59636e}
.ev{margin:.3rem 0 .3rem .9rem}
.sys{color:#7d4e00}
.role{font-weight:600;color:#1f2328}
.src{font-weight:600}
.a,.p{color:#59636e;text-decoration:none}
summary{cursor:pointer}
details.call,details.result,details.think{margin:.3rem 0}
.pv{color:#59636e;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.err{color:#d1242f;font-weight:600}
.error>pre{border-color:#d1242f}
mark{background:#fff8c5;border:1px solid #d4a72c;border-radius:3px;padding:0 .3em;color:#1f2328}
img{max-width:100%;height:auto}
.diff .n{color:#59636e}.diff .add{color:#1a7f37}.diff .del{color:#d1242f}.diff .gap{color:#59636e}
.diff ins{text-decoration:none;background:#aceebb}.diff del{text-decoration:none;background:#ffcecb}
.fork{font-size:13px;color:#59636e;margin:.2rem 0 .2rem .9rem}
.prompt{border-top:1px solid #d1d9e0;margin-top:1rem}
.prompt ol{padding-left:1.5rem}
@media print{body{max-width:none;padding:0}a{color:inherit;text-decoration:none}.m,.prompt li{break-inside:avoid}pre{border-color:#999}}
`
