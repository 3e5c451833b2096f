// The rating app's keyboard (served at /static/judge.js). A grade is typed: its digits, with a
// leading "-" for a negative one. A grade no other grade begins with is sent at once (every
// grade of 0-3); one that another begins with (1 of 0-10) is sent by Enter, or after a moment
// without a key. What is typed is shown in #typed. x is "can't judge"; b, or Backspace with
// nothing typed, goes back; Escape clears what is typed and any message. The buttons work without this script.
//
// One post per page: once a grade is sent, further keys wait for the next page, so a quick
// second key never grades this item twice (the server refuses such a post too: the form's
// version names the label the page showed).
(() => {
  const form = document.getElementById("grades");
  if (!form) return;
  const typed = document.getElementById("typed");
  const buttons = Array.from(form.querySelectorAll("button[data-grade]"));
  const grades = buttons.map((button) => button.dataset.grade);
  const cantJudge = form.querySelector("button[data-key]");
  const WAIT_MS = 800;
  let buffer = "";
  let timer = null;
  let sent = false;

  const show = (text) => { if (typed) typed.textContent = text; };
  const button = (text) => buttons.find((b) => b.dataset.grade === text);
  const beginsAnother = (text) => grades.some((g) => g !== text && g.startsWith(text));
  const stopTimer = () => { if (timer !== null) { clearTimeout(timer); timer = null; } };
  const clear = (text) => { buffer = ""; stopTimer(); show(text); };

  const send = (chosen) => {
    if (sent) return;
    sent = true;
    stopTimer();
    show(`Sending ${chosen.value === cantJudge.value ? "can't judge" : chosen.value}…`);
    form.requestSubmit(chosen);
  };

  const sendTyped = () => {
    const chosen = button(buffer);
    if (chosen) send(chosen);
    else clear(`${buffer} is not a grade of this scale: type a grade again.`);
  };

  const type = (key) => {
    const next = buffer + key;
    if (!grades.some((g) => g.startsWith(next))) {
      clear(`${next} is not a grade of this scale (${grades[0]} to ${grades[grades.length - 1]}).`);
      return;
    }
    buffer = next;
    stopTimer();
    if (button(buffer) && !beginsAnother(buffer)) {
      send(button(buffer));
      return;
    }
    show(`Typed: ${buffer}${button(buffer) ? " (Enter sends it)" : ""}`);
    timer = setTimeout(sendTyped, WAIT_MS);
  };

  // A page restored from the back-forward cache takes keys again.
  window.addEventListener("pageshow", (event) => { if (event.persisted) { sent = false; clear(""); } });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    const key = event.key.toLowerCase();
    if (sent) {
      if (key.length === 1 || key === "enter" || key === "backspace") event.preventDefault();
      return;
    }
    if (/^[0-9]$/.test(key) || key === "-") {  // a "-" after the first key: said, not dropped
      event.preventDefault();
      type(key);
    } else if (key === "enter" && buffer) {
      event.preventDefault();
      sendTyped();
    } else if (key === "escape") {
      clear("");  // what is typed, and any message about it
    } else if (key === "backspace" && buffer) {
      event.preventDefault();
      buffer = buffer.slice(0, -1);
      stopTimer();
      show(buffer ? `Typed: ${buffer}` : "");
      if (buffer) timer = setTimeout(sendTyped, WAIT_MS);
    } else if (key === "b" || key === "backspace") {
      const back = document.getElementById("back");
      if (back) { event.preventDefault(); back.click(); }
    } else if (cantJudge && key === cantJudge.dataset.key) {
      event.preventDefault();
      send(cantJudge);
    }
  });
})();
