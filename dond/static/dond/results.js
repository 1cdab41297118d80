// The Results page's chart: every complete split (your points vs the other's), the Pareto frontier, your result.
(function () {
  var L = js_vars.labels;
  var datasets = [
    {label: L.chart_all, data: js_vars.chart.all, backgroundColor: 'rgba(120,120,120,0.45)', pointRadius: 4,
     order: 3, clip: false},
    {label: L.chart_frontier, data: js_vars.chart.frontier, showLine: true, borderColor: '#1f77b4',
     backgroundColor: '#1f77b4', pointRadius: 5, order: 2, clip: false},
  ];
  if (js_vars.agreed) {
    datasets.push({label: L.chart_agreed, data: [js_vars.agreed], backgroundColor: '#d62728', pointRadius: 9,
                   pointStyle: 'star', borderColor: '#d62728', order: 1, clip: false});
  }
  window.dondChart = new Chart(document.getElementById('dond-splits'), {
    type: 'scatter',
    data: {datasets: datasets},
    options: {
      animation: false,
      maintainAspectRatio: false,  // the box's height (Results.html), so a phone's narrow chart is not squashed
      layout: {padding: 10},
      scales: {
        x: {title: {display: true, text: L.chart_x}, min: 0, max: 10, ticks: {stepSize: 1}},
        y: {title: {display: true, text: L.chart_y}, min: 0, max: 10, ticks: {stepSize: 1}},
      },
    },
  });
})();
