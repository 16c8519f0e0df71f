// The approvals inbox's progressive enhancement. Every page works without
// it: forms post and redirect, and a reload shows the current state. With
// it: times are shown in the viewer's time zone, a form is sent once, an
// open list shows new requests by itself, and an open request says when
// someone else decided it (and disables its buttons).
//
// Change is noticed by watch(), which follows the inbox's Server-Sent
// Events (or, without EventSource, polls a JSON address of the inbox):
// watch() is the one place that knows how change arrives.
(function () {
  'use strict';

  var body = document.body;
  var live = document.getElementById('live');

  function say(text) {
    if (live) live.textContent = text;
  }

  // Times: <time datetime="…Z">… UTC</time> in the viewer's zone.
  var fmt;
  try {
    fmt = new Intl.DateTimeFormat(undefined, {
      year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short'
    });
  } catch (e) {
    fmt = null;
  }
  function localTimes(root) {
    if (!fmt) return;
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var iso = t.getAttribute('datetime');
      var d = new Date(iso);
      if (isNaN(d.getTime())) return;
      t.textContent = fmt.format(d);
      t.title = iso;
    });
  }
  localTimes(document);
  var foot = document.querySelector('footer p');
  if (foot && fmt) {
    foot.textContent = 'Times are shown in your time zone (' + fmt.resolvedOptions().timeZone + ').' +
      (+body.dataset.poll > 0 ? ' This page updates itself.' : '');
  }

  // A decision is sent once: the first submit disables every decision
  // form of the page (a double click sends nothing more).
  var decisions = document.querySelectorAll('form.decision');
  function disableDecisions() {
    decisions.forEach(function (f) {
      f.dataset.sent = '1';
      f.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
      f.querySelectorAll('textarea').forEach(function (a) { a.readOnly = true; });
    });
  }
  decisions.forEach(function (f) {
    f.addEventListener('submit', function (e) {
      if (f.dataset.sent) {
        e.preventDefault();
        return;
      }
      // Disable after the browser has read the form's fields.
      setTimeout(disableDecisions, 0);
      say('Sending your decision…');
    });
  });

  // watch calls onChange with what the page shows, each time it changed,
  // until onChange returns false. It follows the server's event stream
  // (events: Server-Sent Events, the answer as JSON) when the browser has
  // EventSource, and polls the JSON address url every poll milliseconds
  // otherwise, or once the stream could not be opened.
  function watch(url, events, onChange) {
    var poll = +body.dataset.poll;
    if (!(poll > 0) || !url) return;
    var stopped = false;
    function tick() {
      if (stopped || !window.fetch) return;
      fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' }, cache: 'no-store' })
        .then(function (r) { return r.ok || r.status === 404 ? r.json().then(function (j) { return { status: r.status, body: j }; }) : null; })
        .then(function (a) {
          if (a && onChange(a) === false) stopped = true;
        })
        .catch(function () { /* offline for a moment: try again at the next tick */ })
        .then(function () { if (!stopped) setTimeout(tick, poll); });
    }
    if (events && window.EventSource) {
      var es = new EventSource(events);
      var opened = false;
      es.onopen = function () { opened = true; };
      var handle = function (e) {
        var a = { status: 200, body: JSON.parse(e.data) };
        if (onChange(a) === false) { stopped = true; es.close(); }
      };
      es.addEventListener('list', handle);
      es.addEventListener('run', handle);
      es.onerror = function () {
        // A stream never opened (no route, a proxy that buffers): poll.
        // One that opened reconnects by itself.
        if (!opened && !stopped) { es.close(); setTimeout(tick, poll); }
      };
      return;
    }
    setTimeout(tick, poll);
  }

  if (body.dataset.page === 'list') {
    var version = body.dataset.version;
    watch(body.dataset.api, body.dataset.events, function (a) {
      if (a.status !== 200 || a.body.version === version) return true;
      version = a.body.version;
      fetch(location.href, { credentials: 'same-origin', cache: 'no-store' })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html === null) return;
          var doc = new DOMParser().parseFromString(html, 'text/html');
          var fresh = doc.getElementById('runs');
          var runs = document.getElementById('runs');
          if (!fresh || !runs) return;
          var n = doc.querySelectorAll('#runs .card').length;
          runs.replaceWith(document.adoptNode(fresh));
          localTimes(fresh);
          say('The list was updated: ' + n + (n === 1 ? ' request waits.' : ' requests wait.'));
        });
      return true;
    });
  }

  if (body.dataset.page === 'run' && body.dataset.waiting === 'true' && body.dataset.ticket) {
    var ticket = body.dataset.ticket;
    var stale = document.getElementById('stale');
    watch(body.dataset.api, body.dataset.events, function (a) {
      var p = a.body && a.body.pending;
      var text = null;
      if (a.status === 404 || !a.body.waiting) {
        text = 'This run no longer waits for a decision: someone decided it. Reload the page to see its history.';
      } else if (!p || p.ticket !== ticket) {
        text = 'The run no longer waits for what this page shows: someone decided it and it moved on. Reload the page to see what it waits for now.';
      } else if (p.decided) {
        text = 'This request was ' + p.decided.kind + ' by ' + (p.decided.by || 'an unnamed person') + ' at ' +
          (fmt ? fmt.format(new Date(p.decided.at)) : p.decided.at) + '.';
      }
      if (text === null) return true;
      if (!decisions.length || decisions[0].dataset.sent) return false; // this page's own decision
      disableDecisions();
      if (stale) {
        stale.textContent = text;
        stale.hidden = false;
      }
      return false;
    });
  }
})();
