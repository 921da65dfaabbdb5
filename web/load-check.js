// Says on the page what to do when it cannot start, instead of hanging on "loading…": opened
// from disk (file://, where browsers load no JavaScript modules, workers or WebAssembly), or
// app.js or one of its imports (../dist/attnlab.js) failed to load. A classic script, so it runs
// where the modules cannot. app.js reports later failures (the worker, the binding) itself.
(function () {
  var SERVE = 'From the repository root run `npm start` (it builds dist/ when needed and serves the page at http://localhost:8080/web/), ' +
    'or serve the repository root with any static server (for example `python3 -m http.server`) and open /web/ there.';
  var WHY = {
    file: 'This page cannot run from a file:// URL: browsers do not load JavaScript modules, Web Workers or WebAssembly from disk.',
    module: 'The page\u2019s scripts did not load (is dist/ built? is the repository root being served?).',
  };
  function show(reason) {
    var box = document.getElementById('load-error');
    if (!box || box.dataset.reason) return;
    box.dataset.reason = reason;
    var strong = document.createElement('strong');
    strong.textContent = 'attnlab did not start. ';
    var why = document.createElement('span');
    why.textContent = WHY[reason] + ' ';
    var what = document.createElement('span');
    what.textContent = SERVE;
    box.replaceChildren(strong, why, what);
    box.hidden = false;
    var badge = document.getElementById('build-badge');
    if (badge) badge.textContent = 'not loaded';
    var sel = document.getElementById('variant');
    if (sel && sel.options[0]) sel.options[0].textContent = 'not loaded';
  }
  if (location.protocol === 'file:') show('file');
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t.tagName === 'SCRIPT' && t.type === 'module') show(location.protocol === 'file:' ? 'file' : 'module');
  }, true);
})();
