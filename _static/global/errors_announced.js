// A refused page reads its errors out (docs/accessibility.md). oTree's banner above the form ("Please fix the
// errors." or the page's own message) and each field's message (.form-control-errors) are in the page when it loads,
// where a screen reader does not read them by itself; so one alert region (#errors-announced, seen only by screen
// readers) receives their text just after the load, and follows them: when a message goes (global/field_errors.js
// hides it once its field is fixed) the region says what is left, and it is empty once nothing is. Each field's
// message also describes the controls of its field (aria-describedby; the field is the message's nearest
// [data-error-scope], else its parent element, as in field_errors.js) while it is shown, so a screen reader reads it
// again when the person reaches the field.
(function () {
  var messages = Array.prototype.slice.call(document.querySelectorAll('.otree-form-errors, .form-control-errors'));
  if (!messages.length) return;
  var region = document.createElement('div');
  region.id = 'errors-announced';
  region.className = 'visually-hidden';
  region.setAttribute('role', 'alert');
  (document.getElementById('form') || document.body).prepend(region);

  function controlsOf(message) {
    if (!message.classList.contains('form-control-errors')) return [];
    var scope = message.closest('[data-error-scope]') || message.parentElement;
    return Array.prototype.filter.call(scope.querySelectorAll('input, textarea, select'), function (control) {
      return control.type !== 'hidden';
    });
  }
  function describe(control, id, on) {
    var ids = (control.getAttribute('aria-describedby') || '').split(/\s+/).filter(function (x) { return x && x !== id; });
    if (on) ids.push(id);
    if (ids.length) { control.setAttribute('aria-describedby', ids.join(' ')); } else { control.removeAttribute('aria-describedby'); }
  }
  messages.forEach(function (message, index) { if (!message.id) message.id = 'field-error-' + index; });

  function update() {
    var left = messages.filter(function (message) { return !message.hidden && message.textContent.trim(); });
    messages.forEach(function (message) {
      var shown = left.indexOf(message) >= 0;
      controlsOf(message).forEach(function (control) { describe(control, message.id, shown); });
    });
    var text = left.map(function (message) { return message.textContent.trim(); }).join(' ');
    if (region.textContent !== text) region.textContent = text;
  }
  var watch = new MutationObserver(update);
  messages.forEach(function (message) { watch.observe(message, {attributes: true, attributeFilter: ['hidden']}); });
  setTimeout(update, 100);
})();
