// Node's own xDS client calling Muster's echo service (muster.echo.Echo/Say, JSON on the wire) through
// xds:///SERVICE: the bootstrap comes from GRPC_XDS_BOOTSTRAP_CONFIG (muster xds bootstrap). Calls one at a time,
// one every --interval-ms, for --seconds (0: until killed), and prints one JSON line per call, in the form of
// muster grpc-call --json (what the lab reads: event, ts, seq, ok, status, latency_us, attempts) plus at (epoch
// ms), served_by and code (what the conformance tests read):
//   {"event":"call","ts":"2026-12-05T20:00:00.000Z","service":"orders","seq":1,"ok":true,"status":"OK",
//    "latency_us":1200,"attempts":["a"],"at":1733400000000,"served_by":"a","code":0}
// Usage: node xds-client.js --target xds:///orders [--interval-ms 20] [--seconds 0] [--deadline-ms 2000]
//        [--delay-ms 0]
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
const delayMs = Number(option('delay-ms', '0')); // the server waits this long before it answers

const client = new grpc.Client(target, grpc.credentials.createInsecure());
const toJson = (o) => Buffer.from(JSON.stringify(o));
const fromJson = (b) => JSON.parse(b.toString());
const started = Date.now();
const service = target.substring('xds:///'.length);
const codeNames = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));
let n = 0;

function callOnce() {
  if (seconds > 0 && Date.now() - started >= seconds * 1000) {
    client.close();
    return;
  }
  const at = Date.now();
  const t0 = process.hrtime.bigint();
  const mine = ++n;
  client.makeUnaryRequest('/muster.echo.Echo/Say', toJson, fromJson, { text: 'node', delay_ms: delayMs },
    { deadline: new Date(Date.now() + deadlineMs) }, (err, reply) => {
      const us = Math.round(Number(process.hrtime.bigint() - t0) / 1e3);
      const base = { event: 'call', ts: new Date(at).toISOString(), service, seq: mine, latency_us: us, at };
      const line = err
        ? { ...base, ok: false, status: codeNames[err.code] || String(err.code), attempts: [], code: err.code,
            error: String(err.details || err.message) }
        : { ...base, ok: true, status: 'OK', attempts: [reply.served_by], served_by: reply.served_by, code: 0 };
      process.stdout.write(JSON.stringify(line) + '\n');
      setTimeout(callOnce, intervalMs);
    });
}

process.on('SIGTERM', () => process.exit(0));
callOnce();
