/* The live view of a run: polls the run's live.json and writes its figures into the page (textContent only:
   nothing from the server is ever parsed as markup). Stops once the run is finished. */
(function () {
  "use strict";
  var section = document.getElementById("live");
  if (!section) { return; }
  var source = section.getAttribute("data-source");
  var every = parseInt(section.getAttribute("data-refresh-ms"), 10) || 3000;
  var words = {
    finished: "Finished: every planned trial is stored and judged.",
    writing: "In progress: a passhat process is writing this run.",
    stopped: "Stopped before its end: no process is writing it; passhat run --resume runs the rest.",
    unknown: "In progress or stopped."
  };

  function num(x) {
    if (x === null || x === undefined) { return "\u2014"; }
    return (x > 0 && x < 0.0005) ? "<0.001" : x.toFixed(3);
  }

  function put(name, text) {
    var node = section.querySelector('[data-live="' + name + '"]');
    if (node) { node.textContent = text; }
  }

  function show(p) {
    var n = p.trials_per_scenario;
    put("state-text", words[p.state] || words.unknown);
    put("stored", String(p.stored));
    put("planned", p.planned === null ? "\u2014" : String(p.planned));
    put("unjudged", String(p.unjudged));
    put("scenarios", String(p.scenarios));
    put("n", String(n));
    put("pass_1", num(p.pass_hat_k["1"]));
    put("pass_n", num(p.pass_hat_k[String(n)]));
    put("updated", "Updated " + new Date().toLocaleTimeString() + ".");
    var bar = section.querySelector('[data-live="bar"]');
    if (bar) { bar.max = p.planned || p.stored || 1; bar.value = p.stored; }
    section.setAttribute("data-state", p.state);
  }

  function poll() {
    fetch(source, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (!response.ok || (response.headers.get("content-type") || "").indexOf("json") < 0) {
          throw new Error("signed out or gone");
        }
        return response.json();
      })
      .then(function (p) {
        show(p);
        if (p.state !== "finished") { window.setTimeout(poll, every); }
      })
      .catch(function () { put("updated", "Cannot reach the server (or you were signed out): reload the page."); });
  }

  if (section.getAttribute("data-state") !== "finished") { window.setTimeout(poll, every); }
}());
