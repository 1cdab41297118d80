// social_eval comprehension page: answers chosen but not yet sent survive a reload (answers the server already
// refused come back from the server and win).
(function () {
  const box = document.getElementById('se-quiz');
  if (!box) return;
  const key = box.dataset.storageKey;
  const radios = Array.from(box.querySelectorAll('input[type=radio]'));
  let kept = {};
  try { kept = JSON.parse(sessionStorage.getItem(key) || '{}'); } catch (e) { kept = {}; }
  const answered = new Set(radios.filter(function (r) { return r.checked; }).map(function (r) { return r.name; }));
  for (const radio of radios) {
    if (!answered.has(radio.name) && kept[radio.name] === radio.value) radio.checked = true;
  }
  box.addEventListener('change', function () {
    const data = {};
    for (const radio of radios) if (radio.checked) data[radio.name] = radio.value;
    try { sessionStorage.setItem(key, JSON.stringify(data)); } catch (e) { /* no storage: no draft */ }
  });
})();
