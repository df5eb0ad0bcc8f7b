// The Muster console's page. It holds one EventSource per page view (the browser reconnects it on its own) and
// renders what the server sends. Every value from the registry goes into the DOM through textContent or
// createElement, never innerHTML: metadata is user input.
'use strict';

(function () {
  const main = document.getElementById('main');
  const banner = document.getElementById('banner');
  const notice = document.getElementById('notice');
  const conn = document.getElementById('conn');
  let source = null;
  let session = { allowDrain: false };
  let events = [];
  let lastData = null; // the last page data rendered: the banner alone changing re-renders nothing
  const MAX_EVENTS = 500;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function table(headers, rows) {
    const head = el('tr', {}, ...headers.map(h => el('th', { text: h })));
    return el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows));
  }

  function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    if (parts[0] === 'service' && parts.length === 3) return { page: 'service', ns: parts[1], service: parts[2] };
    if (parts[0] === 'events') return { page: 'events' };
    if (parts[0] === 'cluster') return { page: 'cluster' };
    return { page: 'overview' };
  }

  function open() {
    if (source) source.close();
    const r = route();
    for (const id of ['overview', 'events', 'cluster']) {
      document.getElementById('nav-' + id).classList.toggle('active', r.page === id || (id === 'overview' && r.page === 'service'));
    }
    notice.hidden = true;
    main.replaceChildren(el('p', { class: 'sub', text: 'loading…' }));
    events = [];
    lastData = null;
    const q = new URLSearchParams({ page: r.page });
    if (r.page === 'service') { q.set('ns', r.ns); q.set('service', r.service); }
    source = new EventSource('/api/stream?' + q.toString());
    source.addEventListener('open', () => { conn.textContent = 'live'; });
    source.addEventListener('error', () => { conn.textContent = 'reconnecting to the console…'; checkSession(); });
    source.addEventListener('state', m => render(r, JSON.parse(m.data)));
    source.addEventListener('events', m => addEvents(JSON.parse(m.data)));
  }

  function render(r, state) {
    showBanner(state.banner);
    const data = JSON.stringify(state.data);
    if (data === lastData) return;
    lastData = data;
    if (r.page === 'overview') renderOverview(state.data);
    else if (r.page === 'service') renderService(state.data);
    else if (r.page === 'cluster') renderCluster(state.data);
    else if (r.page === 'events' && !document.getElementById('events')) renderEvents();
  }

  function showBanner(b) {
    if (b && b.stale) {
      banner.replaceChildren(el('span', { class: 'headline', text: 'etcd unreachable — data stale for ' + b.staleSeconds + ' s' }),
        el('span', { class: 'reason', text: b.reason || '' }));
      banner.hidden = false;
    } else {
      banner.hidden = true;
      banner.textContent = '';
    }
  }

  function counts(obj) {
    const out = el('span');
    for (const [k, v] of Object.entries(obj || {})) out.appendChild(el('span', { class: 'chip' + (k === 'UP' || k === 'DRAINING' || k === 'STARTING' ? ' state-' + k : '') }, k + ' ' + v));
    return out;
  }

  function renderOverview(d) {
    const nodes = [el('h1', { text: 'Namespaces and services' })];
    if (!d.namespaces.length) nodes.push(el('div', { class: 'empty', text: 'No namespace found in the registry yet.' }));
    for (const ns of d.namespaces) {
      nodes.push(el('h2', {}, 'namespace ', el('code', { text: ns.name })));
      if (!ns.services.length) { nodes.push(el('div', { class: 'empty', text: 'No service in this namespace.' })); continue; }
      nodes.push(table(['Service', 'Instances', 'By state', 'By version', 'Revision'], ns.services.map(s => {
        const link = el('a', { href: '#/service/' + encodeURIComponent(ns.name) + '/' + encodeURIComponent(s.name), text: s.name });
        return el('tr', { 'data-service': s.name }, el('td', {}, link, s.stale ? el('span', { class: 'chip error', text: 'stale' }) : null),
          el('td', { class: 'num', text: String(s.instances) }), el('td', {}, counts(s.byState)),
          el('td', {}, counts(s.byVersion)), el('td', { class: 'num', text: String(s.revision) }));
      })));
    }
    main.replaceChildren(...nodes);
  }

  // The service page is patched, not rebuilt: TTLs count down every second, and a row whose instance did not change
  // keeps its elements (a Drain button stays where the pointer is). The lease cells are read apart from the instance
  // and arrive later, so they are patched in place too: a lease read never replaces a row.
  function renderService(d) {
    const key = d.namespace + '/' + d.service + '/' + session.allowDrain;
    let view = document.getElementById('service-view');
    if (!view || view.dataset.key !== key) {
      view = el('div', { id: 'service-view' }, el('a', { class: 'back', href: '#/', text: '← all services' }), el('h1', {}, 'service ', el('code', { text: d.namespace + '/' + d.service })),
        el('p', { class: 'sub' }), el('p', { class: 'error lease-problem' }), el('div', { class: 'instances' }));
      view.dataset.key = key;
      main.replaceChildren(view);
    }
    view.querySelector('.sub').textContent = d.instances.length + ' instance(s) at revision ' + d.revision + (d.known ? '' : ' — not (yet) found in the registry');
    const problem = view.querySelector('.lease-problem');
    problem.textContent = d.leaseProblem ? 'leases: ' + d.leaseProblem : '';
    problem.hidden = !d.leaseProblem;
    const box = view.querySelector('.instances');
    if (!d.instances.length) {
      if (!box.querySelector('.empty')) box.replaceChildren(el('div', { class: 'empty', text: 'No instance registered.' }));
      return;
    }
    let body = box.querySelector('tbody');
    if (!body) {
      const headers = ['Id', 'Address', 'State', 'Zone', 'Weight', 'Version', 'Tags', 'Metadata'];
      if (session.showLeases) headers.push('Lease');
      headers.push('TTL left', 'Registered at');
      if (session.allowDrain) headers.push('');
      box.replaceChildren(table(headers, []));
      body = box.querySelector('tbody');
    }
    const old = new Map(Array.from(body.children).map(r => [r.dataset.key, r]));
    const rows = d.instances.map(i => {
      const sig = JSON.stringify(Object.assign({}, i, { lease: undefined, ttlLeft: undefined, ttlGranted: undefined }));
      let r = old.get(i.version + '/' + i.id);
      if (!r || r.dataset.sig !== sig) return instanceRow(d, i, sig);
      if (session.showLeases) r.querySelector('td.lease').textContent = lease(i);
      r.querySelector('td.ttl').textContent = ttl(i);
      return r;
    });
    if (rows.length !== body.children.length || rows.some((r, n) => body.children[n] !== r)) body.replaceChildren(...rows);
  }

  function lease(i) {
    return i.lease === undefined ? '…' : i.lease;
  }

  function ttl(i) {
    return i.ttlLeft === undefined ? '…' : i.ttlLeft + ' s / ' + i.ttlGranted + ' s';
  }

  function instanceRow(d, i, sig) {
    const meta = el('td', { class: 'meta' });
    for (const [k, v] of Object.entries(i.metadata || {})) meta.appendChild(el('span', { class: 'kv' }, el('b', { text: k + '=' }), v));
    const cells = [el('td', { class: 'mono id', text: i.id }), el('td', { class: 'mono', text: i.address }),
      el('td', { class: 'state state-' + i.state, text: i.state }), el('td', { text: i.zone || '—' }),
      el('td', { class: 'num', text: String(i.weight) }), el('td', { text: i.version }),
      el('td', {}, ...(i.tags || []).map(t => el('span', { class: 'chip', text: t }))), meta,
      session.showLeases ? el('td', { class: 'mono lease', text: lease(i) }) : null,
      el('td', { class: 'num ttl', text: ttl(i) }),
      el('td', { class: 'mono when', text: i.registeredAt ? i.registeredAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—' })];
    if (session.allowDrain) {
      const td = el('td');
      if (i.state === 'UP') {
        const b = el('button', { class: 'drain', type: 'button', text: 'Drain' });
        b.addEventListener('click', () => drain(b, d, i));
        td.appendChild(b);
      }
      cells.push(td);
    }
    const r = el('tr', { 'data-id': i.id, 'data-version': i.version }, ...cells.filter(c => c));
    r.dataset.key = i.version + '/' + i.id;
    r.dataset.sig = sig;
    return r;
  }

  function say(text, ok) {
    notice.textContent = text;
    notice.classList.toggle('ok', !!ok);
    notice.hidden = false;
  }

  async function drain(button, d, i) {
    button.disabled = true;
    try {
      const res = await fetch('/api/drain', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Muster-Token': session.token || '' },
        body: JSON.stringify({ namespace: d.namespace, service: d.service, version: i.version, id: i.id })
      });
      const body = await res.json().catch(() => ({ error: 'HTTP ' + res.status }));
      if (res.ok) say('Drained ' + d.service + '/' + i.version + '/' + i.id + ': now ' + body.state + '.', true);
      else say('Drain of ' + i.id + ' failed: ' + (body.error || ('HTTP ' + res.status)));
    } catch (e) {
      say('Drain of ' + i.id + ' failed: ' + e);
    } finally {
      button.disabled = false;
    }
  }

  function renderEvents() {
    main.replaceChildren(el('h1', { text: 'Events' }),
      el('p', { class: 'sub', text: 'Joins, leaves, drains, lease losses, re-registrations, resyncs and staleness, newest first (the console keeps the last ' + MAX_EVENTS + ').' }),
      table(['Time', 'Event', 'Service', 'Instance', 'Detail'], []));
    main.querySelector('table').id = 'events';
    drawEvents();
  }

  function addEvents(list) {
    events = events.concat(list).slice(-MAX_EVENTS);
    if (!document.getElementById('events')) renderEvents(); else drawEvents();
  }

  function drawEvents() {
    const body = document.querySelector('#events tbody');
    body.replaceChildren(...events.slice().reverse().map(e => el('tr', { 'data-type': e.type },
      el('td', { class: 'mono when', text: e.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z') }),
      el('td', { class: 'ev-' + e.type, text: e.type }), el('td', { text: e.namespace + '/' + e.service }),
      el('td', { class: 'mono', text: e.id ? e.version + '/' + e.id : '' }), el('td', { text: e.detail }))));
  }

  function size(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = bytes, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u === 0 ? v : v.toFixed(1)) + ' ' + units[u];
  }

  function renderCluster(d) {
    const nodes = [el('h1', { text: 'etcd cluster' })];
    if (d.loading) { nodes.push(el('p', { class: 'sub', text: 'reading member status…' })); main.replaceChildren(...nodes); return; }
    nodes.push(el('p', { class: 'sub', text: 'leader ' + (d.leader || 'none') + ' · revision ' + d.revision + ' · read at ' + d.readAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') }));
    if (d.problem) nodes.push(el('p', { class: 'error', text: d.problem }));
    nodes.push(table(['Endpoint', 'Member', 'Role', 'Version', 'DB size / quota ' + size(d.quota), 'In use', 'Raft term / index', 'Errors'],
      d.members.map(m => {
        if (!m.answered) return el('tr', {}, el('td', { class: 'mono', text: m.endpoint }), el('td', { class: 'error', colspan: '7', text: m.failure }));
        const bar = el('span', { class: 'bar' + (m.dbPercent >= 80 ? ' warn' : '') }, el('span'));
        bar.firstChild.style.width = Math.max(2, Math.min(100, m.dbPercent)) + '%';
        return el('tr', {}, el('td', { class: 'mono', text: m.endpoint }), el('td', { class: 'mono', text: m.id + (m.name ? ' (' + m.name + ')' : '') }),
          el('td', { text: m.leader ? 'leader' : (m.learner ? 'learner' : 'follower') }), el('td', { text: m.version }),
          el('td', {}, bar, size(m.dbSize) + ' (' + (m.dbSize > 0 && m.dbPercent < 0.1 ? '< 0.1' : m.dbPercent) + ' %)'), el('td', { class: 'num', text: size(m.dbSizeInUse) }),
          el('td', { class: 'num', text: m.raftTerm + ' / ' + m.raftIndex }), el('td', { class: 'error', text: (m.errors || []).join('; ') }));
      })));
    nodes.push(el('h2', { text: 'Alarms' }));
    nodes.push(d.alarms.length ? table(['Member', 'Alarm'], d.alarms.map(a => el('tr', {}, el('td', { class: 'mono', text: a.member }), el('td', { class: 'error', text: a.type }))))
      : el('div', { class: 'empty', text: 'No alarm raised.' }));
    main.replaceChildren(...nodes);
  }

  // Logging in: the token never goes to the server in a URL. The printed URL carries it in the fragment (which the
  // browser does not send); the page posts it to /api/login, which answers with an HttpOnly session cookie, and
  // drops it from the address bar and the history. Without it, or when the console restarted with another token,
  // the login form asks for it.
  const loginForm = document.getElementById('login');
  const loginError = document.getElementById('login-error');
  let started = false;

  async function login(token) {
    const res = await fetch('/api/login', {
      method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: token })
    });
    if (res.ok) return null;
    const body = await res.json().catch(() => ({ error: 'HTTP ' + res.status }));
    return body.error || ('HTTP ' + res.status);
  }

  function askLogin(problem) {
    if (source) { source.close(); source = null; }
    conn.textContent = 'logged out';
    main.replaceChildren();
    loginError.textContent = problem || '';
    loginError.hidden = !problem;
    loginForm.hidden = false;
    document.getElementById('login-token').focus();
  }

  async function checkSession() {
    const res = await fetch('/api/session', { credentials: 'same-origin' }).catch(() => null);
    if (res && res.status === 401) askLogin('The console no longer knows this browser (was it restarted?): log in again.');
  }

  async function begin() {
    const res = await fetch('/api/session', { credentials: 'same-origin' }).catch(() => null);
    if (!res) { conn.textContent = 'cannot reach the console'; return; }
    if (res.status === 401) { askLogin(); return; }
    session = await res.json();
    loginForm.hidden = true;
    if (!started) { started = true; window.addEventListener('hashchange', open); }
    open();
  }

  loginForm.addEventListener('submit', async ev => {
    ev.preventDefault();
    const input = document.getElementById('login-token');
    const problem = await login(input.value.trim());
    input.value = '';
    if (problem) askLogin(problem); else begin();
  });

  (async () => {
    const m = location.hash.match(/^#token=([^&]*)/);
    if (m) {
      history.replaceState(null, '', location.pathname + location.search + '#/');
      const problem = await login(decodeURIComponent(m[1]));
      if (problem) { askLogin('The token in the URL was refused: ' + problem); return; }
    }
    begin();
  })();
})();
