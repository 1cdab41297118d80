// social_eval rating page: keep unsaved input across reloads, count characters, keyboard shortcuts.
(function () {
  const form = document.getElementById('form');
  if (!form || typeof js_vars === 'undefined') return;
  const key = js_vars.storage_key;
  const fields = Array.from(form.querySelectorAll('textarea.se-reason, .se-scale input[type=radio]'));

  // Drop what was kept for earlier conversations of this participant.
  for (let i = localStorage.length - 1; i >= 0; i--) {
    const name = localStorage.key(i);
    if (name && name.startsWith(js_vars.storage_prefix) && name !== key) localStorage.removeItem(name);
  }

  function load() {
    try { return JSON.parse(localStorage.getItem(key) || '{}'); } catch (e) { return {}; }
  }
  function save() {
    const data = {};
    for (const el of fields) {
      if (el.type === 'radio') { if (el.checked) data[el.name] = el.value; }
      else if (el.value) data[el.name] = el.value;
    }
    localStorage.setItem(key, JSON.stringify(data));
  }
  const kept = load();
  for (const el of fields) {
    if (!(el.name in kept)) continue;
    if (el.type === 'radio') el.checked = el.value === kept[el.name];
    else if (!el.value) el.value = kept[el.name];
  }
  form.addEventListener('input', save);
  form.addEventListener('change', save);

  // Character counters for the reasoning boxes.
  function count(area) {
    const counter = form.querySelector('.se-counter[data-for="' + area.id + '"]');
    if (!counter) return;
    const n = area.value.trim().length;
    counter.textContent = n + ' / ' + js_vars.min_chars + ' characters';
    counter.classList.toggle('se-short', n < js_vars.min_chars);
  }
  for (const area of form.querySelectorAll('textarea.se-reason')) {
    count(area);
    area.addEventListener('input', function () { count(area); });
  }

  // In a rating row, typing a number ("-3", "10") picks that value.
  let typed = '', timer = null;
  form.addEventListener('keydown', function (event) {
    const radio = event.target;
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') {
      event.preventDefault();
      form.requestSubmit ? form.requestSubmit() : form.submit();
      return;
    }
    if (!(radio instanceof HTMLInputElement) || radio.type !== 'radio' || !/^[0-9-]$/.test(event.key)) return;
    event.preventDefault();
    typed = (event.key === '-' ? '-' : typed + event.key);
    clearTimeout(timer);
    timer = setTimeout(function () { typed = ''; }, 900);
    const group = radio.closest('.se-scale');
    const match = group && group.querySelector('input[value="' + typed + '"]');
    if (match) {
      match.checked = true;
      match.focus();
      match.dispatchEvent(new Event('change', {bubbles: true}));
    }
  });
})();
