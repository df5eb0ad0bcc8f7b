// Node's own xDS client calling Muster's echo service (muster.echo.Echo/Say, JSON on the wire) through
// xds:///SERVICE: the bootstrap comes from GRPC_XDS_BOOTSTRAP_CONFIG (muster xds bootstrap). Calls one at a time,
// one every --interval-ms, for --seconds (0: until killed), and prints one JSON line per call:
//   {"n":1,"at":1733400000000,"ok":true,"served_by":"a","ms":1.2}
//   {"n":2,"at":1733400000100,"ok":false,"code":14,"error":"..."}
// Usage: node xds-client.js --target xds:///orders [--interval-ms 20] [--seconds 0] [--deadline-ms 2000]
'use strict';

const grpc = require('@grpc/grpc-js');
require('@grpc/grpc-js-xds').register();

function option(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const target = option('target', null);
if (!target || !target.startsWith('xds:///')) {
  console.error('xds-client.js: give --target xds:///SERVICE');
  process.exit(2);
}
const intervalMs = Number(option('interval-ms', '20'));
const seconds = Number(option('seconds', '0'));
const deadlineMs = Number(option('deadline-ms', '2000'));

const client = new grpc.Client(target, grpc.credentials.createInsecure());
const toJson = (o) => Buffer.from(JSON.stringify(o));
const fromJson = (b) => JSON.parse(b.toString());
const started = Date.now();
let n = 0;

function callOnce() {
  if (seconds > 0 && Date.now() - started >= seconds * 1000) {
    client.close();
    return;
  }
  const at = Date.now();
  const t0 = process.hrtime.bigint();
  const mine = ++n;
  client.makeUnaryRequest('/muster.echo.Echo/Say', toJson, fromJson, { text: 'node', delay_ms: 0 },
    { deadline: new Date(Date.now() + deadlineMs) }, (err, reply) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const line = err
        ? { n: mine, at, ok: false, code: err.code, error: String(err.details || err.message) }
        : { n: mine, at, ok: true, served_by: reply.served_by, ms: Math.round(ms * 10) / 10 };
      process.stdout.write(JSON.stringify(line) + '\n');
      setTimeout(callOnce, intervalMs);
    });
}

process.on('SIGTERM', () => process.exit(0));
callOnce();
