(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  // A document id in a ranking shows the document's text in its row (a copy of the text in
  // the list at the end, as text); without this script the link goes to the list.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("ol.ranking a.doc-link") : null;
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) {
      return;
    }
    var item = link.closest("li");
    var source = document.getElementById(link.getAttribute("href").slice(1));
    if (!item || !source) { return; }
    event.preventDefault();
    var shown = item.querySelector(".inline-text");
    if (shown) {
      item.removeChild(shown);
      link.setAttribute("aria-expanded", "false");
      return;
    }
    var copy = document.createElement("div");
    copy.className = "inline-text doc-text";
    copy.textContent = source.querySelector(".doc-text").textContent;
    item.appendChild(copy);
    link.setAttribute("aria-expanded", "true");
  });
  var form = document.getElementById("filters");
  if (!form) { return; }
  var box = document.getElementById("filter-text");
  var count = document.getElementById("filter-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-delta]"));
  var sections = items.filter(function (e) { return e.tagName === "SECTION"; });
  function wanted(element, text, show) {
    // loss and gain are decided by the metric's direction (a fall of RBP_resid is a gain)
    if (show === "losses" && !element.classList.contains("loss")) { return false; }
    if (show === "gains" && !element.classList.contains("gain")) { return false; }
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
