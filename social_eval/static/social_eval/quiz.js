// social_eval comprehension page: answers chosen but not yet sent survive a reload (global/drafts.js, this tab only;
// answers the server already refused come back from the server and win).
(function () {
  const box = document.getElementById('se-quiz');
  if (!box) return;
  LabDrafts.keep(box, {key: box.dataset.storageKey, session: true});
})();
