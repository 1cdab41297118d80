// Judging page: clicked sentences and ticked error types fill two hidden fields, joined by '#'.
(function () {
  var markedField = document.getElementById('id_marked_sentences');
  var typesField = document.getElementById('id_err_type');
  var list = document.getElementById('marked-list');
  var empty = document.getElementById('marked-empty');
  var sentences = Array.prototype.slice.call(document.querySelectorAll('.sentence'));
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.err-type'));

  function sync() {
    var marked = sentences.filter(function (s) { return s.classList.contains('marked'); });
    markedField.value = marked.map(function (s) { return s.dataset.id; }).join('#');
    list.replaceChildren.apply(list, marked.map(function (s) {
      var item = document.createElement('li');
      item.textContent = s.textContent;
      return item;
    }));
    empty.hidden = marked.length > 0;
    typesField.value = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; }).join('#');
  }

  function toggle(sentence) {
    var on = sentence.classList.toggle('marked');
    sentence.setAttribute('aria-pressed', on ? 'true' : 'false');
    sync();
  }

  // After a rejected submission the hidden fields come back filled: restore the marks and ticks from them.
  var ids = markedField.value.split('#');
  sentences.forEach(function (s) {
    if (ids.indexOf(s.dataset.id) >= 0) { s.classList.add('marked'); s.setAttribute('aria-pressed', 'true'); }
    s.addEventListener('click', function () { toggle(s); });
    s.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle(s); }
    });
  });
  var codes = typesField.value.split('#');
  boxes.forEach(function (b) {
    b.checked = codes.indexOf(b.value) >= 0;
    b.addEventListener('change', sync);
  });
  sync();
})();
