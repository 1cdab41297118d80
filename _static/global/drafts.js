// Drafts: a page's unsent input kept in the browser (localStorage), so that a reload or a refused submission loses
// nothing. One mechanism for every page that needs it:
//
//   var draft = LabDrafts.keep(form, {key: js_vars.draft_key, prefix: js_vars.draft_prefix});
//
// `form` may be any element holding the fields (a live page's chat box is no form). Option `session: true` keeps
// the draft in sessionStorage (this tab only) instead of localStorage. keep()
// restores what was kept under `key` into the form's named fields that are still empty (what the server sent back
// wins), then saves on every input or change. A script that changes a field itself (a hidden field) calls
// draft.save(). Drafts under `prefix` with another key (earlier items of the same participant) are dropped.
// State that is no field (a stepwise page's current step) is kept with draft.set('_step', 2) and read back from
// draft.kept._step (names starting with '_' are never fields).
(function () {
  'use strict';
  var SKIPPED = ['submit', 'button', 'file', 'password', 'reset', 'image'];

  function storage(session) {
    try { return session ? window.sessionStorage : window.localStorage; }
    catch (e) { return null; } // blocked storage: the page works without drafts
  }

  function named(form) {
    return Array.prototype.filter.call(form.querySelectorAll('input[name], textarea[name], select[name]'),
      function (el) { return SKIPPED.indexOf(el.type) < 0 && !el.disabled && el.name.charAt(0) !== '_'; });
  }

  function collect(form) {
    var data = {};
    named(form).forEach(function (el) {
      if (el.type === 'radio') { if (el.checked) data[el.name] = el.value; }
      else if (el.type === 'checkbox') {
        data[el.name] = data[el.name] || [];
        if (el.checked) data[el.name].push(el.value);
      } else if (el.value !== '') data[el.name] = el.value;
    });
    return data;
  }

  function restore(form, kept) {
    var fields = named(form);
    var groupSet = function (name, type) {
      return fields.some(function (el) { return el.name === name && el.type === type && el.checked; });
    };
    fields.forEach(function (el) {
      if (!(el.name in kept)) return;
      var value = kept[el.name];
      if (el.type === 'radio') { if (!groupSet(el.name, 'radio') && el.value === value) el.checked = true; }
      else if (el.type === 'checkbox') {
        if (!groupSet(el.name, 'checkbox') && Array.isArray(value)) el.checked = value.indexOf(el.value) >= 0;
      } else if (el.value === '' && typeof value === 'string') el.value = value;
    });
  }

  function keep(form, options) {
    var store = storage(options && options.session);
    var key = options && options.key;
    if (!form || !store || !key) return {save: function () {}, clear: function () {}, set: function () {}, kept: {}};
    var prefix = options.prefix || '';
    if (prefix) {
      for (var i = store.length - 1; i >= 0; i--) {
        var name = store.key(i);
        if (name && name !== key && name.indexOf(prefix) === 0) store.removeItem(name);
      }
    }
    var kept = {};
    try { kept = JSON.parse(store.getItem(key) || '{}') || {}; } catch (e) { kept = {}; }
    restore(form, kept);
    var extra = {};
    Object.keys(kept).forEach(function (name) { if (name.charAt(0) === '_') extra[name] = kept[name]; });
    var save = function () {
      var data = collect(form);
      Object.keys(extra).forEach(function (name) { data[name] = extra[name]; });
      try { store.setItem(key, JSON.stringify(data)); } catch (e) { /* storage full: nothing kept */ }
    };
    form.addEventListener('input', save);
    form.addEventListener('change', save);
    return {
      save: save,
      clear: function () { store.removeItem(key); },
      set: function (name, value) { extra[name] = value; save(); },
      kept: kept,
    };
  }

  window.LabDrafts = {keep: keep};
})();
