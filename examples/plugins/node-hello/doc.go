// Package nodehello holds no Go code: it is the folder of node-hello, an
// example panto extension written in Node.js (index.js, started by the
// node-hello script). Its test starts it with a real go-plugin client, as
// panto does, and drives the panto.extension.v1 protocol end to end.
package nodehello
