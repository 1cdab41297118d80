// bias_tests pages: the confidence slider fills a hidden field only once touched; ticked arguments fill another.
(function () {
  var slider = document.getElementById('confidence-slider');
  if (slider) {
    var hidden = document.getElementById('id_confidence');
    var shown = document.getElementById('confidence-value');
    var update = function () {
      slider.classList.remove('untouched');
      hidden.value = slider.value;
      shown.textContent = slider.value;
    };
    slider.addEventListener('input', update);
    slider.addEventListener('change', update);
  }
  var boxes = document.querySelectorAll('.bias-argument');
  var selected = document.getElementById('id_selected_arguments');
  if (selected && boxes.length) {
    var collect = function () {
      selected.value = Array.prototype.filter.call(boxes, function (box) { return box.checked; })
        .map(function (box) { return box.value; }).join(',');
    };
    Array.prototype.forEach.call(boxes, function (box) { box.addEventListener('change', collect); });
    collect();
  }
})();
