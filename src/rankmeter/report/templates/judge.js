// The rating app's keyboard (served at /static/judge.js): a digit grades, x is "can't judge",
// b or Backspace goes back. The buttons work without it (and by accesskey).
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  const target = event.target;
  if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
  const key = event.key.toLowerCase();
  if (key === "b" || key === "backspace") {
    const back = document.getElementById("back");
    if (back) { event.preventDefault(); back.click(); }
    return;
  }
  for (const button of document.querySelectorAll("#grades button[data-key]")) {
    if (button.dataset.key === key) {
      event.preventDefault();
      button.form.requestSubmit(button);
      return;
    }
  }
});
