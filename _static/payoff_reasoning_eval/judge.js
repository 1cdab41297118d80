// Judging page: clicked sentences and ticked error types fill two hidden fields, joined by '#'. A reload or a
// refused verdict loses nothing: the server sends a refused verdict back, and the browser keeps a draft of every
// mark, verdict and remark (global/drafts.js, the same mechanism for every page that keeps drafts).
(function () {
  var form = document.getElementById('form');
  var draft = window.LabDrafts && typeof js_vars !== 'undefined'
    ? LabDrafts.keep(form, {key: js_vars.draft_key, prefix: js_vars.draft_prefix})
    : {save: function () {}};
  var markedField = document.getElementById('id_marked_sentences');
  var typesField = document.getElementById('id_err_type');
  var list = document.getElementById('marked-list');
  var empty = document.getElementById('marked-empty');
  var sentences = Array.prototype.slice.call(document.querySelectorAll('.sentence'));
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.err-type'));

  function sync() {
    var marked = sentences.filter(function (s) { return s.classList.contains('marked'); });
    markedField.value = marked.map(function (s) { return s.dataset.id; }).join('#');
    // With two responses on the page, each marked sentence says which one it came from (first or last attempt).
    var twoResponses = document.getElementById('last-response') !== null;
    list.replaceChildren.apply(list, marked.map(function (s) {
      var item = document.createElement('li');
      if (twoResponses) {
        var from = document.createElement('span');
        from.className = 'marked-from';
        from.textContent = s.closest('[data-source]').dataset.source + ': ';
        item.appendChild(from);
      }
      var text = document.createElement('span');
      text.className = 'marked-text';
      text.textContent = s.textContent;
      item.appendChild(text);
      return item;
    }));
    empty.hidden = marked.length > 0;
    typesField.value = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; }).join('#');
    draft.save();
  }

  function toggle(sentence) {
    var on = sentence.classList.toggle('marked');
    sentence.setAttribute('aria-pressed', on ? 'true' : 'false');
    sync();
    if (window.LabFieldErrors) LabFieldErrors.follow(list);  // a fixed field's error goes (global/field_errors.js)
  }

  // The hidden fields may come back filled (a refused verdict, a kept draft): restore the marks and ticks from them.
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

  // Remarks: the count and the limit are shown from the start; nothing typed or pasted is ever cut.
  var remarks = document.getElementById('id_remarks');
  var counter = document.getElementById('remarks-counter');
  if (remarks && counter && typeof js_vars !== 'undefined') {
    var max = js_vars.max_remarks;
    var count = function () {
      var n = Array.from(remarks.value).length;
      var words = n > max ? js_vars.chars_over : js_vars.chars;
      counter.textContent = words.replace('{n}', n).replace('{max}', max)
        .replace('{over}', n - max);
      counter.classList.toggle('over', n > max);
      remarks.setAttribute('aria-invalid', n > max ? 'true' : 'false');
    };
    remarks.addEventListener('input', count);
    count();
  }
})();
