// bias_tests pages: the confidence slider fills a hidden field once touched (any click, drag or key on it counts,
// also at its starting 50); ticked arguments fill another. Both survive a reload and a refused submission: the
// draft (global/drafts.js) or the server puts the hidden field back, and the slider or the ticks follow it.
(function () {
  var form = document.getElementById('form');
  var draft = window.LabDrafts && typeof js_vars !== 'undefined'
    ? LabDrafts.keep(form, {key: js_vars.draft_key, prefix: js_vars.draft_prefix})
    : {save: function () {}};

  var slider = document.getElementById('confidence-slider');
  if (slider) {
    var hidden = document.getElementById('id_confidence');
    var shown = document.getElementById('confidence-value');
    var show = function () {
      slider.classList.remove('untouched');
      shown.textContent = slider.value;
    };
    var touch = function () {
      show();
      hidden.value = slider.value;
      draft.save();
      if (window.LabFieldErrors) LabFieldErrors.follow(slider);  // answered: its error goes (global/field_errors.js)
    };
    if (hidden.value !== '') {
      slider.value = hidden.value;
      show();
    }
    slider.addEventListener('input', touch);
    slider.addEventListener('change', touch);
    // A click at the current value fires no input event: the pointer itself counts.
    slider.addEventListener('pointerup', touch);
    slider.addEventListener('keyup', function (event) {
      if (/^(Arrow|Page|Home|End)/.test(event.key) || event.key === ' ') touch();
    });
  }

  var boxes = document.querySelectorAll('.bias-argument');
  var selected = document.getElementById('id_selected_arguments');
  if (selected && boxes.length) {
    var counter = document.getElementById('arguments-count');
    var kept = selected.value.split(',');
    Array.prototype.forEach.call(boxes, function (box) { box.checked = kept.indexOf(box.value) >= 0; });
    var collect = function () {
      var ticked = Array.prototype.filter.call(boxes, function (box) { return box.checked; });
      selected.value = ticked.map(function (box) { return box.value; }).join(',');
      if (counter && typeof js_vars !== 'undefined') counter.textContent = js_vars.ticked.replace('{n}', ticked.length);
      draft.save();
    };
    Array.prototype.forEach.call(boxes, function (box) { box.addEventListener('change', collect); });
    collect();
  }
})();
