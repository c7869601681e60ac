#!/usr/bin/env node
// node-hello: a panto extension written in Node.js.
//
// panto loads extensions with hashicorp/go-plugin over gRPC. Nothing in that
// protocol is Go-specific; this file is the whole of what an extension in any
// language has to do, in the order it happens:
//
//   1. Check go-plugin's magic cookie (PANTO_PLUGIN=extension-v1).
//   2. Serve, on 127.0.0.1 and a free port:
//        panto.extension.v1.Extension  the extension itself (sdk/extension.proto)
//        grpc.health.v1.Health         go-plugin's Ping (optional)
//        plugin.GRPCController         go-plugin's Kill asks us to exit (optional)
//   3. Print the handshake line "1|1|tcp|127.0.0.1:PORT|grpc" to stdout, and
//      nothing else to stdout, ever.
//   4. Log to stderr as JSON lines; panto shows them under our name.
//
// go-plugin also calls plugin.GRPCBroker and plugin.GRPCStdio. We do not
// serve them: the host gets UNIMPLEMENTED and carries on without them (see
// the README). Without the broker we cannot call panto's Host service back,
// so system-prompt edits travel in the hook responses (their `edits` field).
'use strict';

const path = require('node:path');
const util = require('node:util');

const API_VERSION = 1; // the panto extension API version this file speaks
const NAME = 'node-hello';
const VERSION = '0.1.0';

// ---------------------------------------------------------------------------
// Logging. stdout belongs to the handshake, so everything goes to stderr as
// one JSON object a line. go-plugin (client.go, logStderr) parses "@level"
// and "@message", and "@timestamp" with Go's layout
// 2006-01-02T15:04:05.000000Z07:00: exactly six fractional digits, where
// Date.toISOString() gives three, so we pad. Any other key is shown as a
// key=value pair. A line that is not JSON is still shown, at debug level.
// ---------------------------------------------------------------------------
function log(level, message, fields = {}) {
  const timestamp = new Date().toISOString().replace(/Z$/, '000Z');
  process.stderr.write(
    JSON.stringify({ '@level': level, '@message': message, '@timestamp': timestamp, ...fields }) + '\n',
  );
}

// A stray console.log would corrupt the handshake (if it came first) or be
// lost: send the console to stderr too.
console.log = console.info = (...args) => log('info', util.format(...args));
console.debug = (...args) => log('debug', util.format(...args));

// ---------------------------------------------------------------------------
// 1. The magic cookie. It is not security, only a guard against a user
// running the executable by hand: go-plugin sets it in our environment.
// ---------------------------------------------------------------------------
if (process.env.PANTO_PLUGIN !== 'extension-v1') {
  process.stderr.write(
    'This is a panto extension: it is meant to be started by panto, not run directly.\n' +
      'Try: panto --extension ' + process.argv[1].replace(/index\.js$/, NAME) + '\n',
  );
  process.exit(1);
}

// go-plugin also sets PLUGIN_PROTOCOL_VERSIONS (the app protocol versions the
// host accepts, "1" for panto; our handshake line answers 1) and
// PLUGIN_MIN_PORT / PLUGIN_MAX_PORT (a port range for Go plugins; the host
// does not check it, so a free port from the OS is fine).

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// keepCase keeps the .proto field names (session_id, not sessionId) in the
// objects we receive and return; defaults fills absent scalars (false, "",
// 0); oneofs adds `payload: "session_start"` naming the oneof member set.
const LOAD_OPTIONS = { keepCase: true, defaults: true, oneofs: true };

function load(file) {
  return grpc.loadPackageDefinition(protoLoader.loadSync(file, LOAD_OPTIONS));
}

const extensionProto = load(path.join(__dirname, '..', '..', '..', 'sdk', 'extension.proto'));
const healthProto = load(path.join(__dirname, 'proto', 'health.proto'));
const controllerProto = load(path.join(__dirname, 'proto', 'grpc_controller.proto'));

// ---------------------------------------------------------------------------
// The extension. Each handler takes the request object and returns the
// response object. Domain errors (a bad command, an unsupported version) go
// in the response's `error` field; a gRPC error (see unary below) makes panto
// disable the extension for the rest of the session.
// ---------------------------------------------------------------------------
const extension = {
  Init(req) {
    // panto sends the range of API versions it speaks; we answer ours.
    const supported = req.min_api_version <= API_VERSION && API_VERSION <= req.api_version;
    const resp = {
      api_version: API_VERSION,
      name: NAME,
      version: VERSION,
      description: 'Example extension in Node.js: greets each session and adds /node-note.',
      events: ['session_start'],
      commands: [{ name: 'node-note', description: 'Append a system note from Node.js', usage: 'TEXT' }],
    };
    if (!supported) {
      resp.error = {
        message:
          `${NAME} speaks panto extension API version ${API_VERSION}, ` +
          `but this panto speaks versions ${req.min_api_version} to ${req.api_version}`,
      };
      log('warn', resp.error.message);
      return resp;
    }
    // req.host_broker_id would let us dial panto's Host service through the
    // go-plugin broker; this example needs no callbacks.
    log('info', 'initialized', { session_id: req.session_id, host_version: req.host_version });
    return resp;
  },

  HandleEvent(req) {
    if (req.event !== 'session_start') {
      // panto only sends the events we listed in Init.
      return { error: { message: `${NAME} does not handle event ${JSON.stringify(req.event)}` } };
    }
    const start = req.session_start || {};
    return {
      // Applied in order when this call returns, as if we had called
      // Host.AddSystemMessage.
      edits: [
        {
          mode: 'append',
          text: `Hello from a Node.js extension (session ${start.session_id}, resumed: ${Boolean(start.resumed)}).`,
        },
      ],
    };
  },

  RunCommand(req) {
    if (req.name !== 'node-note') {
      return { error: { message: `${NAME} has no command ${JSON.stringify(req.name)}` } };
    }
    return { output: 'noted', edits: [{ mode: 'append', text: req.args }] };
  },

  Shutdown() {
    exitSoon('Extension.Shutdown');
    return {};
  },
};

// unary adapts a handler to grpc-js's (call, callback) form. A handler that
// throws is a bug, not a domain error: report it as a gRPC INTERNAL error.
function unary(method, handler) {
  return (call, callback) => {
    log('debug', 'call', { method });
    let resp;
    try {
      resp = handler(call.request);
    } catch (err) {
      log('error', `${method} failed: ${err && err.stack ? err.stack : err}`);
      callback({ code: grpc.status.INTERNAL, details: `${method}: ${err}` });
      return;
    }
    callback(null, resp);
  };
}

// ---------------------------------------------------------------------------
// 2. The server.
// ---------------------------------------------------------------------------
const server = new grpc.Server();

const handlers = {};
for (const [method, handler] of Object.entries(extension)) {
  handlers[method] = unary(method, handler);
}
server.addService(extensionProto.panto.extension.v1.Extension.service, handlers);

// go-plugin's GRPCClient.Ping checks service "plugin" (go-plugin's
// GRPCServiceName); "" is the whole server, by gRPC convention.
server.addService(healthProto.grpc.health.v1.Health.service, {
  Check(call, callback) {
    const service = call.request.service;
    if (service === '' || service === 'plugin') {
      callback(null, { status: 'SERVING' });
    } else {
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${service}` });
    }
  },
});

// go-plugin's Client.Kill calls GRPCController.Shutdown and gives the process
// 2 s to exit before killing it.
server.addService(controllerProto.plugin.GRPCController.service, {
  Shutdown(call, callback) {
    exitSoon('GRPCController.Shutdown');
    callback(null, {});
  },
});

// exitSoon stops the server once the current reply is sent, then exits.
// tryShutdown stops accepting calls and waits for those in flight (the one
// replying now included); the timer is a backstop should a client hold a
// call open.
let exiting = false;
function exitSoon(why) {
  if (exiting) return;
  exiting = true;
  log('info', `shutting down (${why})`);
  setImmediate(() => server.tryShutdown(() => process.exit(0)));
  setTimeout(() => process.exit(0), 1000).unref();
}

// A Ctrl-C in the terminal is panto's to handle, not ours: panto starts
// extensions in a process group of their own, but another host might not.
// The host decides when we stop (Shutdown), so ignore SIGINT, as go-plugin's
// Go servers do.
process.on('SIGINT', () => log('debug', 'ignoring SIGINT; panto stops extensions itself'));

// Port 0: the OS picks a free port. Insecure is fine on 127.0.0.1; go-plugin
// uses TLS only with AutoMTLS, which panto does not enable.
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    log('error', `cannot listen: ${err.message}`);
    process.exit(1);
  }
  // -------------------------------------------------------------------------
  // 3. The handshake line, once the server accepts connections:
  //    core protocol version (go-plugin's, always 1) | app protocol version
  //    (panto's go-plugin protocol, 1) | network | address | protocol.
  // -------------------------------------------------------------------------
  process.stdout.write(`1|1|tcp|127.0.0.1:${port}|grpc\n`);
  log('info', 'listening', { address: `127.0.0.1:${port}`, node: process.version });
});
