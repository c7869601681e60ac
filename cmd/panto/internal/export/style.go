package export

// css is the page's one stylesheet: readable on screen, light or dark as
// the reader's system prefers (prefers-color-scheme), monospace for tool
// input and output, the sidebar beside the page on a wide screen and
// above it on a narrow one, and fit to print (no sidebar). It loads
// nothing: no font, no image, no import.
const css markup = `:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa;--link:#0969da;--user:#0969da;--reply:#1a7f37;--tool:#8250df;--sys:#7d4e00;--err:#d1242f;--add:#1a7f37;--del:#d1242f;--insbg:#aceebb;--delbg:#ffcecb;--markbg:#fff8c5;--markline:#d4a72c}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--code:#151b23;--link:#4493f8;--user:#4493f8;--reply:#3fb950;--tool:#ab7df8;--sys:#d29922;--err:#f85149;--add:#3fb950;--del:#f85149;--insbg:#1f6f3a;--delbg:#8e2a2a;--markbg:#3b2e0a;--markline:#9e6a03}}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);max-width:62rem;margin:0 auto;padding:1rem 1.25rem}
h1{font-size:1.4rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}h3{font-size:1rem;margin:.5rem 0}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--code);border:1px solid var(--line);border-radius:4px;padding:.4rem .6rem;margin:.3rem 0}
a{color:var(--link)}
dl.hd{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.5rem 0}dl.hd dt{color:var(--muted)}dl.hd dd{margin:0}
nav{font-size:13px;color:var(--muted)}
.t{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.m{border-left:3px solid var(--line);padding:.1rem .8rem;margin:.8rem 0}
.user{border-color:var(--user)}.assistant{border-color:var(--reply)}.tool{border-color:var(--tool)}
.h,.ev{font-size:13px;color:var(--muted)}
.ev{margin:.3rem 0 .3rem .9rem}
.sys{color:var(--sys)}
.role{font-weight:600;color:var(--fg)}
.src{font-weight:600}
.a,.p{color:var(--muted);text-decoration:none}
summary{cursor:pointer}
details.call,details.result,details.think{margin:.3rem 0}
details.src>summary{font-size:12px;color:var(--muted)}
.pv{color:var(--muted);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.err{color:var(--err);font-weight:600}
.error>pre{border-color:var(--err)}
mark,.lbl{background:var(--markbg);border:1px solid var(--markline);border-radius:3px;padding:0 .3em;color:var(--fg)}
img{max-width:100%;height:auto}
.diff .n{color:var(--muted)}.diff .add{color:var(--add)}.diff .del{color:var(--del)}.diff .gap{color:var(--muted)}
.diff ins{text-decoration:none;background:var(--insbg)}.diff del{text-decoration:none;background:var(--delbg)}
.fork{font-size:13px;color:var(--muted);margin:.2rem 0 .2rem .9rem}
.prompt{border-top:1px solid var(--line);margin-top:1rem}
.prompt ol{padding-left:1.5rem}
.md{overflow-wrap:anywhere}.md>:first-child{margin-top:.3rem}.md>:last-child{margin-bottom:.3rem}
.md p{margin:.5rem 0}.md h4,.md h5,.md h6{font-size:1rem;margin:.8rem 0 .3rem}
.md code{background:var(--code);border-radius:3px;padding:0 .25em}.md pre code{padding:0}
.md blockquote{margin:.5rem 0;padding:0 .8rem;border-left:3px solid var(--line);color:var(--muted)}
.md ul,.md ol{padding-left:1.5rem;margin:.4rem 0}
.md table{border-collapse:collapse;margin:.5rem 0}.md th,.md td{border:1px solid var(--line);padding:.2rem .5rem}
.md .l{text-align:left}.md .c{text-align:center}.md .r{text-align:right}
.md .url{color:var(--muted);font-size:12px;overflow-wrap:anywhere}.md .link{text-decoration:underline dotted}
.md hr{border:0;border-top:1px solid var(--line)}
.side{font-size:13px;color:var(--muted);border:1px solid var(--line);border-radius:4px;padding:.3rem .8rem;margin:.8rem 0}
.side h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;margin:.6rem 0 .3rem}
.side ul,.side ol{margin:.2rem 0;padding-left:1.1rem}.side li{margin:.1rem 0}
.side .tree,.side .tree ul{padding-left:0;list-style:none}.side .tree ul ul,.side .tree li>ul{padding-left:.8rem}
.think>.t{color:var(--muted);font-style:italic}
@media (min-width:84rem){body{margin-left:20rem}.side{position:fixed;top:0;left:0;bottom:0;width:17rem;margin:0;overflow:auto;border:0;border-right:1px solid var(--line);border-radius:0;padding:.5rem 1rem}}
@media print{body{max-width:none;padding:0;margin:0}.side{display:none}a{color:inherit;text-decoration:none}.m,.prompt li{break-inside:avoid}pre{border-color:#999}}
`
