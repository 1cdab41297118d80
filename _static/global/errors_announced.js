// A refused page reads its errors out (docs/accessibility.md). oTree's banner above the form ("Please fix the
// errors." or the page's own message) and each field's message (.form-control-errors) are in the page when it loads,
// where a screen reader does not read them by itself; so one alert region (#errors-announced, seen only by screen
// readers) receives their text just after the load, and follows them: when a message goes (global/field_errors.js
// hides it once its field is fixed) the region says what is left, and it is empty once nothing is.
(function () {
  var messages = Array.prototype.slice.call(document.querySelectorAll('.otree-form-errors, .form-control-errors'));
  if (!messages.length) return;
  var region = document.createElement('div');
  region.id = 'errors-announced';
  region.className = 'visually-hidden';
  region.setAttribute('role', 'alert');
  (document.getElementById('form') || document.body).prepend(region);
  function left() {
    return messages.filter(function (message) { return !message.hidden && message.textContent.trim(); })
      .map(function (message) { return message.textContent.trim(); }).join(' ');
  }
  function update() {
    var text = left();
    if (region.textContent !== text) region.textContent = text;
  }
  var watch = new MutationObserver(update);
  messages.forEach(function (message) { watch.observe(message, {attributes: true, attributeFilter: ['hidden']}); });
  setTimeout(update, 100);
})();
