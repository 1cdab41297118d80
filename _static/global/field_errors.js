// Errors that follow the person (docs/accessibility.md): a refused field's message (oTree's .form-control-errors)
// goes as soon as the person has fixed that field, and oTree's banner above the form ("Please fix the errors.") goes
// with the last of them. A field's scope is its nearest [data-error-scope] (else the message's parent element); it
// counts as fixed once (unless it says what it needs: data-error-needs, a selector that must match) every visible text, number or range control in it is valid (checkValidity, and no
// aria-invalid="true" set by a page's own counter) and, where it holds radio buttons or tick boxes, one is chosen.
// The server checks everything again on submission. Used by bias_tests and payoff_reasoning_eval.
(function () {
  var form = document.getElementById('form');
  if (!form) return;

  function fixed(scope) {
    // A field without controls of its own (payoff's marked sentences) names what must be there: data-error-needs.
    if (scope.dataset.errorNeeds) return document.querySelector(scope.dataset.errorNeeds) !== null;
    var controls = Array.prototype.slice.call(scope.querySelectorAll('input, textarea, select'));
    var choices = controls.filter(function (c) { return c.type === 'radio' || c.type === 'checkbox'; });
    if (choices.length && !choices.some(function (c) { return c.checked; })) return false;
    return controls.every(function (c) {
      if (c.type === 'hidden' || c.type === 'radio' || c.type === 'checkbox') return true;
      return c.checkValidity() && c.getAttribute('aria-invalid') !== 'true';
    });
  }

  // The person changed ``changed``: the error of the field it belongs to goes if that field is now fixed.
  function follow(changed) {
    var left = 0;
    Array.prototype.forEach.call(document.querySelectorAll('.form-control-errors'), function (message) {
      if (message.hidden) return;
      var scope = message.closest('[data-error-scope]') || message.parentElement;
      if (scope.contains(changed) && fixed(scope)) { message.hidden = true; } else { left += 1; }
    });
    if (!left) {
      Array.prototype.forEach.call(document.querySelectorAll('.otree-form-errors'), function (banner) {
        banner.hidden = true;
      });
    }
  }

  // After the page's own handlers (counters, hidden fields) have run.
  ['input', 'change'].forEach(function (name) {
    form.addEventListener(name, function (event) { setTimeout(function () { follow(event.target); }, 0); });
  });
  window.LabFieldErrors = {follow: follow};
})();
