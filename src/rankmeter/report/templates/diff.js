(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var form = document.getElementById("filters");
  if (!form) { return; }
  var box = document.getElementById("filter-text");
  var count = document.getElementById("filter-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-delta]"));
  var sections = items.filter(function (e) { return e.tagName === "SECTION"; });
  function wanted(element, text, show) {
    var delta = parseFloat(element.getAttribute("data-delta"));
    if (show === "losses" && !(delta < 0)) { return false; }
    if (show === "gains" && !(delta > 0)) { return false; }
    if (!text) { return true; }
    var said = (element.getAttribute("data-query") + "\n" +
                (element.getAttribute("data-text") || "")).toLowerCase();
    return said.indexOf(text) >= 0;
  }
  function apply() {
    var text = box.value.trim().toLowerCase();
    var checked = form.querySelector("input[name=show]:checked");
    var show = checked ? checked.value : "all";
    var shown = 0;
    items.forEach(function (element) {
      var keep = wanted(element, text, show);
      element.hidden = !keep;
      if (keep && element.tagName === "SECTION") { shown += 1; }
    });
    count.textContent = shown + " of " + sections.length + " queries shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.hidden = false;
  apply();
}());
