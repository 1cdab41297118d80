// The admin report's downloads, one mechanism for both annotation apps: LabDownloads.save(text, file) saves a CSV
// from the page; every {label, file, csv} in #downloads-json becomes a button in #session-downloads, whose
// data-suffix ends each label.
(function () {
  function save(text, file) {
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], {type: 'text/csv;charset=utf-8'}));
    link.download = file;
    document.body.appendChild(link);
    link.click();
    link.remove();
  }
  window.LabDownloads = {save: save};
  const data = document.getElementById('downloads-json');
  const holder = document.getElementById('session-downloads');
  if (!data || !holder) return;
  JSON.parse(data.textContent).forEach(function (item, index) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-outline-primary btn-sm me-2 mb-2';
    button.id = 'download-' + index;
    button.textContent = item.label + (holder.dataset.suffix || '');
    button.addEventListener('click', function () { save(item.csv, item.file); });
    holder.appendChild(button);
  });
})();
