#!/usr/bin/env python3
"""When does a restarted etcd accept TCP, and when does it answer? (docs/design-storms.md, open question 1)

accept_vs_serve.py ETCD_BIN [--keys N] [--runs R]: starts one etcd member on loopback in a temporary directory,
writes N keys (through the gateway, 100 per transaction), then R times: SIGKILL, restart on the same data, and poll
every 2 ms from the restart (each request given 50 ms): a TCP connect to the client port, GET /version, and a serializable POST /v3/kv/range.
Prints, per run, the ms from the restart to the first of each, and the member's pid is always killed at the end."""
import base64, json, os, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def post(url, body, timeout=1.0):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())

def b64(s): return base64.b64encode(s.encode()).decode()

def main():
    binary = sys.argv[1]
    keys = int(sys.argv[sys.argv.index('--keys') + 1]) if '--keys' in sys.argv else 10000
    runs = int(sys.argv[sys.argv.index('--runs') + 1]) if '--runs' in sys.argv else 5
    version = subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.split('\n')[0]
    data = tempfile.mkdtemp(prefix='accept-vs-serve-')
    cport, pport = free_port(), free_port()
    url = f'http://127.0.0.1:{cport}'
    args = [binary, '--name', 'm0', '--data-dir', data, '--listen-client-urls', url, '--advertise-client-urls', url,
            '--listen-peer-urls', f'http://127.0.0.1:{pport}', '--initial-advertise-peer-urls', f'http://127.0.0.1:{pport}',
            '--initial-cluster', f'm0=http://127.0.0.1:{pport}', '--log-level', 'error']
    log = open(os.path.join(data, 'etcd.log'), 'ab')
    proc = None
    try:
        def start():
            return subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
        proc = start()
        first = poll(url, cport, time.monotonic(), 15)
        if first['range'] is None:
            raise SystemExit('etcd did not answer within 15 s: see ' + log.name)
        for i in range(0, keys, 100):
            ops = [{'request_put': {'key': b64(f'/muster/bench/svc/v1/i{j:06d}'), 'value': b64('x' * 200)}}
                   for j in range(i, min(keys, i + 100))]
            post(url + '/v3/kv/txn', {'success': ops}, timeout=10)
        print(f'{version}; {keys} keys of 200 B; one member; poll every 2 ms; ms from the restart (Popen) to the first:')
        print('run  tcp-accept  /version  kv-range')
        for r in range(1, runs + 1):
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            time.sleep(0.5)
            t0 = time.monotonic()
            proc = start()
            f = poll(url, cport, t0, 15)
            print(f"{r:>3}  {fmt(f['tcp']):>10}  {fmt(f['version']):>8}  {fmt(f['range']):>8}")
    finally:
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(data, ignore_errors=True)

def fmt(v): return '-' if v is None else f'{v:.0f}'

def poll(url, port, t0, limit):
    got = {'tcp': None, 'version': None, 'range': None}
    while time.monotonic() - t0 < limit and got['range'] is None:
        now = lambda: (time.monotonic() - t0) * 1000
        if got['tcp'] is None:
            try:
                with socket.create_connection(('127.0.0.1', port), timeout=0.05):
                    got['tcp'] = now()
            except OSError:
                pass
        if got['tcp'] is not None and got['version'] is None:
            try:
                with urllib.request.urlopen(url + '/version', timeout=0.05) as resp:
                    resp.read()
                    got['version'] = now()
            except OSError:
                pass
        if got['version'] is not None:
            try:
                post(url + '/v3/kv/range', {'key': b64('/muster/'), 'range_end': b64('/muster0'), 'count_only': True,
                                            'serializable': True}, timeout=0.05)
                got['range'] = now()
            except OSError:
                pass
        time.sleep(0.002)
    return got

if __name__ == '__main__':
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally above stops etcd by pid
    main()
