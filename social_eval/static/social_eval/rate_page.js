// social_eval rating page: one rating (agent x dimension) at a time with Back / Next rating and a progress line,
// character counters, a draft of every field and of the current step that survives reloads, and the keyboard flow
// the page's hint describes, and the time each step was on screen. Without this script every rating is shown at
// once and the form still works (without step times).
(function () {
  const form = document.getElementById('form');
  const root = document.getElementById('se-rate');
  if (!form || !root || typeof js_vars === 'undefined') return;
  const words = js_vars.texts;
  const rows = Array.from(root.querySelectorAll('.se-row'));
  const blocks = Array.from(root.querySelectorAll('.se-block'));
  const nextButton = document.getElementById('se-next');
  const backButton = document.getElementById('se-back');
  const submit = root.querySelector('.se-submit');
  const progress = document.getElementById('se-step-progress');
  let current = 0;

  function say(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, name) { return String(values[name]); });
  }
  function length(text) { return Array.from(text.trim()).length; }  // characters as the server counts them
  function area(row) { return row.querySelector('textarea.se-reason'); }
  function radios(row) { return Array.from(row.querySelectorAll('.se-scale input[type=radio]')); }
  function chosen(row) { return radios(row).find(function (r) { return r.checked; }); }

  // Drafts (global/drafts.js): every field and the current step, per conversation; earlier conversations' drafts
  // are dropped. What the server sent back (a refused submission) wins over the draft.
  const draft = LabDrafts.keep(root, {key: js_vars.storage_key, prefix: js_vars.storage_prefix});
  const kept = draft.kept;

  // Counters: neutral before anyone types, then what is missing, then a tick; over the limit says so (nothing is cut).
  function count(text) {
    const counter = root.querySelector('.se-counter[data-for="' + text.id + '"]');
    if (!counter) return;
    const n = length(text.value);
    let state = 'ok', template = words.counter_ok;
    if (n === 0) { state = 'empty'; template = words.counter_empty; }
    else if (n < js_vars.min_chars) { state = 'short'; template = words.counter_short; }
    else if (n > js_vars.max_chars) { state = 'long'; template = words.counter_long; }
    counter.textContent = say(template, {count: n, minimum: js_vars.min_chars, maximum: js_vars.max_chars});
    counter.dataset.state = state;
  }
  for (const row of rows) {
    const text = area(row);
    count(text);
    text.addEventListener('input', function () { count(text); });
  }

  // What is missing in one rating, or '' (the same rules the server applies).
  function problem(row) {
    const n = length(area(row).value);
    if (n < js_vars.min_chars) return say(words.need_reason, {minimum: js_vars.min_chars, count: n});
    if (n > js_vars.max_chars) return say(words.need_shorter, {maximum: js_vars.max_chars, count: n});
    if (!chosen(row)) return words.need_rating;
    return '';
  }
  function showProblem(row, text) {
    const box = row.querySelector('.se-step-error');
    box.textContent = text;
    box.hidden = !text;
  }

  // Time per step (seconds on screen), posted with the form; the server keeps it only when plausible.
  const spent = {};
  let since = null;
  function field(row) { return row.id.replace(/^row-/, ''); }
  function clock() {
    const now = performance.now();
    if (since !== null) spent[field(rows[current])] = (spent[field(rows[current])] || 0) + (now - since) / 1000;
    since = now;
  }
  function writeTimes() {
    clock();
    const times = {};
    for (const row of rows) times[field(row)] = Math.round(10 * (spent[field(row)] || 0)) / 10;
    document.getElementById('se-step-seconds').value = JSON.stringify(times);
  }

  // A message that follows the person: once shown, a rating's message says what is still missing as they type and
  // choose, and goes (with the server's messages for that rating, and oTree's banner with the last) once it is fixed.
  for (const row of rows) {
    const follow = function () {
      const box = row.querySelector('.se-step-error');
      const missing = problem(row);
      if (!box.hidden) showProblem(row, missing);
      if (missing) return;
      row.querySelectorAll('.form-control-errors').forEach(function (message) { message.hidden = true; });
      if (!root.querySelector('.form-control-errors:not([hidden])')) {
        document.querySelectorAll('.otree-form-errors').forEach(function (banner) { banner.hidden = true; });
      }
    };
    row.addEventListener('input', follow);
    row.addEventListener('change', follow);
  }

  // Steps.
  root.classList.add('se-stepwise');
  progress.hidden = false;
  form.noValidate = true;  // the steps check each rating and say what to fix; the server checks again
  // The secrets are in view wherever the secret is rated: the cards open, and on a wide screen the characters' box
  // scrolls to them. On a phone the cards start folded (a tap opens them) so that the conversation comes first.
  const cards = Array.from(document.querySelectorAll('.se-agent'));
  if (!window.matchMedia('(min-width: 1000px)').matches) cards.forEach(function (card) { card.open = false; });
  function showSecrets(row) {
    if (row.dataset.dimension !== 'secret') return;
    cards.forEach(function (card) { card.open = true; });
    const secret = document.querySelector('.se-agent .se-secret');
    const box = document.getElementById('se-context');
    if (secret && box && box.scrollHeight > box.clientHeight) {
      box.scrollTop += secret.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
    }
  }
  function show(index, focus) {
    clock();
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle('se-current', i === current); });
    const block = rows[current].closest('.se-block');
    for (const b of blocks) b.classList.toggle('se-current', b === block);
    document.getElementById('se-step-text').textContent =
      say(words.step, {current: current + 1, total: rows.length}) + ' · ' + rows[current].dataset.label;
    document.getElementById('se-step-fill').style.width = (100 * (current + 1) / rows.length) + '%';
    const last = current === rows.length - 1;
    backButton.hidden = current === 0;
    nextButton.hidden = last;
    submit.hidden = !last;
    draft.set('_step', current);
    if (focus) area(rows[current]).focus({preventScroll: true});
    showSecrets(rows[current]);
    const top = form.querySelector('.se-form').getBoundingClientRect().top;
    if (top < 0) form.querySelector('.se-form').scrollIntoView({block: 'start'});
  }
  // Forward only when this rating is complete; the message says what is missing.
  function forward(focus) {
    const row = rows[current];
    const text = problem(row);
    showProblem(row, text);
    if (text) {
      (length(area(row).value) < js_vars.min_chars || length(area(row).value) > js_vars.max_chars
        ? area(row) : (chosen(row) || radios(row)[0])).focus();
      return;
    }
    if (current === rows.length - 1) {
      form.requestSubmit ? form.requestSubmit() : form.submit();
    } else {
      show(current + 1, focus);
    }
  }
  // A click from the keyboard (Enter/space on the button, detail 0) or on a wide screen puts the focus in the next
  // box; a tap on a phone leaves its keyboard closed.
  function wide() { return window.matchMedia('(min-width: 1000px)').matches; }
  nextButton.addEventListener('click', function (event) { forward(event.detail === 0 || wide()); });
  backButton.addEventListener('click', function (event) { show(current - 1, event.detail === 0 || wide()); });
  form.addEventListener('submit', function (event) {
    const index = rows.findIndex(function (row) { return problem(row) !== ''; });
    if (index < 0) { writeTimes(); return; }
    event.preventDefault();
    show(index, true);
    showProblem(rows[index], problem(rows[index]));
  });

  // Keyboard: a typed number picks a value on the scale; Enter on the scale, or Ctrl+Enter anywhere, goes on.
  let typed = '', timer = null;
  form.addEventListener('keydown', function (event) {
    const target = event.target;
    const onRadio = target instanceof HTMLInputElement && target.type === 'radio';
    if (event.key === 'Enter' && ((event.ctrlKey || event.metaKey) || onRadio)) {
      event.preventDefault();
      forward(true);
      return;
    }
    if (!onRadio || !/^[0-9-]$/.test(event.key)) return;
    event.preventDefault();
    typed = (event.key === '-' ? '-' : typed + event.key);
    clearTimeout(timer);
    timer = setTimeout(function () { typed = ''; }, 900);
    const group = target.closest('.se-scale');
    const match = group && group.querySelector('input[value="' + typed + '"]');
    if (match) {
      match.checked = true;
      match.focus();
      match.dispatchEvent(new Event('change', {bubbles: true}));
    }
  });

  // Start where the server found a problem, else where the draft left off.
  const refused = rows.findIndex(function (row) { return row.querySelector('.form-control-errors'); });
  const start = refused >= 0 ? refused : (Number.isInteger(kept._step) ? kept._step : 0);
  show(start, false);
})();
