/* The tester's chat: polls the session's JSON and redraws the messages (textContent only: nothing from the server is
   ever parsed as markup), shows the agent's typing state, and sends the person's words and controls without a
   reload, with the page's CSRF token. Right after the person's message it asks sooner (an agent often answers
   within a fraction of a second), then at the usual pace. Stops polling once the conversation is over. */
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat) { return; }
  var source = chat.getAttribute("data-source");
  var every = parseInt(chat.getAttribute("data-poll-ms"), 10) || 500;
  var token = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var form = chat.querySelector("[data-form]");
  var list = chat.querySelector("[data-messages]");
  var typing = chat.querySelector("[data-typing]");
  var problem = chat.querySelector("[data-problem]");
  var over = chat.querySelector("[data-over]");
  var pressed = "";
  var timer = 0;
  var SOON_MS = 150;

  function schedule(ms) {
    window.clearTimeout(timer);
    timer = window.setTimeout(poll, ms);
  }

  function draw(news) {
    while (list.firstChild) { list.removeChild(list.firstChild); }
    news.messages.forEach(function (m) {
      var item = document.createElement("li");
      var who = document.createElement("span");
      var text = document.createElement("span");
      item.className = "tester-" + m.who;
      who.className = "tester-who";
      who.textContent = m.who === "customer" ? "You" : "Agent";
      text.className = "tester-text";
      text.textContent = m.text;
      item.appendChild(who);
      item.appendChild(document.createTextNode(" "));
      item.appendChild(text);
      list.appendChild(item);
    });
    typing.hidden = !news.agent_working;
    chat.setAttribute("data-state", news.state);
    if (news.state !== "talking") {
      form.hidden = true;
      over.hidden = false;
      var endings = JSON.parse(chat.getAttribute("data-endings"));
      if (endings[news.state]) { over.firstChild.textContent = endings[news.state] + " "; }
    }
  }

  function ask(url, options) {
    return fetch(url, options).then(function (response) {
      if ((response.headers.get("content-type") || "").indexOf("json") < 0) { throw new Error("signed out or gone"); }
      return response.json();
    });
  }

  function poll() {
    ask(source, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (news) {
        draw(news);
        if (news.state === "talking") { schedule(every); }
      })
      .catch(function () { problem.textContent = "Cannot reach the server (or you were signed out): reload the page."; });
  }

  form.querySelectorAll("button").forEach(function (button) {
    button.addEventListener("click", function () { pressed = button.value; });
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = new URLSearchParams();
    body.set("text", form.elements.text.value);
    body.set("control", pressed);
    ask(chat.getAttribute("data-say"), {
      method: "POST", credentials: "same-origin", body: body,
      headers: { "Accept": "application/json", "X-CSRF-Token": token }
    }).then(function (news) {
      problem.textContent = news.problem || "";
      if (!news.problem) { form.elements.text.value = ""; }
      draw(news);
      if (news.state === "talking") { schedule(SOON_MS); }
    }).catch(function () { problem.textContent = "Cannot reach the server (or you were signed out): reload the page."; });
  });

  if (chat.getAttribute("data-state") === "talking") { schedule(every); }
}());
