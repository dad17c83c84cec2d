/*
 * attnquiz front-end: progressive enhancement of server-rendered pages.
 *
 * Every page works without this file (plain forms, full reloads). With it:
 *   - $...$ / $$...$$ in [data-math] elements are typeset with KaTeX;
 *   - a [data-tex] element (a derivation step, shown as typed) gets KaTeX's rendering of
 *     its data-tex LaTeX in place of the typed text;
 *   - matrix grids get arrow-key navigation and a "paste a whole matrix" box, and the
 *     sentence of their help that names both is shown (hidden in the HTML);
 *   - symbolic and derivation inputs show a live preview of what the parser read;
 *   - htmx swaps in the graded result (the fragment polls until grading is done),
 *     including format errors (HTTP 422), which htmx would otherwise drop;
 *   - an answer the server did not take (busy, too soon, no reply, signed out, form
 *     expired, refused) is said so, with whether it was stored; when the server asks to
 *     wait it is sent again with the same key (stored once), and so is a result's poll;
 *   - an answer typed and not sent is kept as a draft in the tab (never sent anywhere),
 *     restored after a reload, named before the time runs out and listed once the page
 *     takes no answers; an answer already sent and graded is not sent again;
 *   - every text of the clock moves together when the page learns a new deadline.
 *
 * Pure helpers (parseMatrixText, splitDerivationSteps, answerFromFields, answerKey,
 * unsentSentence, minutesText) are exported on window.attnquiz so browser tests can call
 * them directly.
 */
(function () {
  "use strict";

  var PREVIEW_DELAY_MS = 250;
  var DEFAULT_PREVIEW_URL = "/grading/preview/";
  // ".../static/" from this script's own URL (also when collectstatic hashed its name).
  var STATIC_BASE = (function () {
    var src = (document.currentScript && document.currentScript.src) || "/static/attnquiz/attnquiz.js";
    return src.replace(/attnquiz\/attnquiz(\.[0-9a-f]+)?\.js(\?.*)?$/, "");
  })();

  // ---------------------------------------------------------------- maths

  var MATH_DELIMITERS = [
    { left: "$$", right: "$$", display: true },
    { left: "\\[", right: "\\]", display: true },
    { left: "$", right: "$", display: false },
    { left: "\\(", right: "\\)", display: false },
  ];

  // Strict LaTeX only, and no \href, \url, \includegraphics or \html… commands: exercise
  // text is written by authors of other courses (trust: false is KaTeX's default; stated
  // here so no one loosens it by accident).
  // Sizes are capped (maxSize, in em) and macros may expand only so far (maxExpand): a
  // \rule{1000000px}{1000000px} in an exercise made its page two million pixels tall.
  var KATEX_OPTIONS = { throwOnError: false, strict: "error", trust: false, maxSize: 20, maxExpand: 200 };

  function renderMath(root) {
    if (typeof window.renderMathInElement !== "function") return;
    var scope = root || document.body;
    var targets = [];
    if (scope.matches && scope.matches("[data-math]")) targets.push(scope);
    scope.querySelectorAll("[data-math]").forEach(function (element) {
      targets.push(element);
    });
    targets.forEach(function (element) {
      if (element.dataset.mathRendered === "1") return;
      window.renderMathInElement(element, {
        delimiters: MATH_DELIMITERS,
        throwOnError: KATEX_OPTIONS.throwOnError,
        strict: KATEX_OPTIONS.strict,
        trust: KATEX_OPTIONS.trust,
        maxSize: KATEX_OPTIONS.maxSize,
        maxExpand: KATEX_OPTIONS.maxExpand,
        ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option", "input"],
      });
      element.dataset.mathRendered = "1";
    });
  }

  function typesetInto(element, latex) {
    if (window.katex && typeof window.katex.render === "function") {
      window.katex.render(latex, element, {
        throwOnError: KATEX_OPTIONS.throwOnError,
        strict: KATEX_OPTIONS.strict,
        trust: KATEX_OPTIONS.trust,
        maxSize: KATEX_OPTIONS.maxSize,
        maxExpand: KATEX_OPTIONS.maxExpand,
        displayMode: false,
      });
    } else {
      element.textContent = latex;
    }
  }

  // A [data-tex] element shows text a reader without JavaScript can read (a derivation step
  // as the student typed it); its data-tex attribute holds the LaTeX the checker read. KaTeX
  // (the options above) writes its rendering in place of the text; the attribute is never
  // written as HTML. Without KaTeX, or if it fails, the typed text stays.
  function typesetTexElements(root) {
    if (!window.katex || typeof window.katex.render !== "function") return;
    var scope = root || document.body;
    var targets = [];
    if (scope.matches && scope.matches("[data-tex]")) targets.push(scope);
    scope.querySelectorAll("[data-tex]").forEach(function (element) {
      targets.push(element);
    });
    targets.forEach(typesetTexElement);
  }

  function typesetTexElement(element) {
    if (element.dataset.texRendered === "1" || !element.dataset.tex) return;
    var typeset = document.createElement("span"); // rendered apart: a failure leaves the typed text
    try {
      typesetInto(typeset, element.dataset.tex);
    } catch (error) {
      return;
    }
    element.textContent = "";
    while (typeset.firstChild) element.appendChild(typeset.firstChild);
    element.dataset.texRendered = "1";
  }

  // ---------------------------------------------------------- matrix grids

  /*
   * Read a pasted matrix. Accepts
   *   [[1, 2], [3, 4]]      nested brackets (JSON / NumPy / Python style)
   *   1 2\n3 4              one row per line, entries split by spaces or commas
   *   1, 2; 3, 4            rows separated by semicolons (also inside [ ... ])
   *   1\t2\n3\t4            a block copied from a spreadsheet (tab-separated)
 *   array([[1., 2.], ...]) NumPy's repr
   * Returns {rows: [[string]]} or {error: string}. Entries are kept as text: the
   * server decides what a number is (so 1/2 or 1e-3 reach it unchanged).
   */
  var ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];

  // 1 -> "first" ... 10 -> "tenth", then "11th": as the server's messages say it
  // (grading.core.misconceptions.ordinal_word); prompts number tokens from 0, so "row 2" was ambiguous.
  function ordinalWord(number) {
    if (number >= 1 && number <= ORDINALS.length) return ORDINALS[number - 1];
    var suffix = number % 100 >= 10 && number % 100 <= 20 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[number % 10] || "th";
    return number + suffix;
  }

  function parseMatrixText(text) {
    var source = String(text || "")
      .replace(/\r\n?/g, "\n")
      .trim()
      .replace(/^(?:np\.)?(?:array|matrix)\(([\s\S]*)\)$/, "$1") // NumPy's repr
      .trim();
    if (!source) return { error: "Nothing to paste: the box is empty." };
    // LaTeX (\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}, any *matrix environment):
    // rows end with \\, entries are split by &.
    var latex = source.match(/^\\begin\{([a-zA-Z]*matrix)\*?\}([\s\S]*)\\end\{\1\*?\}$/);
    if (latex) {
      source = latex[2]
        .split(/\\\\/)
        .map(function (row) {
          return row.split("&").map(function (entry) { return entry.trim(); }).join("\t");
        })
        .filter(function (row) { return row.trim() !== ""; })
        .join("\n");
    }
    var rowTexts;
    if (/^\[\s*\[/.test(source)) {
      rowTexts = source
        .replace(/^\[\s*\[/, "")
        .replace(/\]\s*\]\s*,?$/, "")
        .split(/\]\s*,?\s*\[/);
    } else {
      var body = source.replace(/^\[/, "").replace(/\]$/, "");
      rowTexts = body.indexOf(";") >= 0 ? body.split(";") : body.split("\n");
    }
    var rows = [];
    rowTexts.forEach(function (rowText) {
      var cleaned = rowText.replace(/[\[\]]/g, " ");
      if (!cleaned.trim()) return; // blank line or trailing ';'
      var entries = cleaned.indexOf("\t") >= 0 ? cleaned.split("\t") : cleaned.split(/[\s,]+/);
      entries = entries.map(function (entry) {
        return entry.trim();
      });
      if (cleaned.indexOf("\t") < 0) {
        entries = entries.filter(function (entry) {
          return entry !== "";
        });
      }
      rows.push(entries);
    });
    if (!rows.length) return { error: "No numbers found in the pasted text." };
    var width = rows[0].length;
    for (var i = 1; i < rows.length; i++) {
      if (rows[i].length !== width) {
        return {
          error:
            "The " + ordinalWord(i + 1) + " row has " + rows[i].length +
            (rows[i].length === 1 ? " entry" : " entries") + " but the first has " + width + ".",
        };
      }
    }
    return { rows: rows };
  }

  function gridCells(grid) {
    var rows = Number(grid.dataset.rows);
    var cols = Number(grid.dataset.cols);
    var inputs = Array.prototype.slice.call(grid.querySelectorAll("input"));
    var cells = [];
    for (var r = 0; r < rows; r++) cells.push(inputs.slice(r * cols, (r + 1) * cols));
    return cells;
  }

  function cellPosition(cells, input) {
    for (var r = 0; r < cells.length; r++) {
      var c = cells[r].indexOf(input);
      if (c >= 0) return { row: r, col: c };
    }
    return null;
  }

  /* The rows from (startRow, startCol) on. ``whole``: the rows must be the whole answer (the
     paste box says "a whole matrix"); a smaller block there would leave older or empty cells
     beside the paste, unnoticed. A block pasted into a cell may be smaller. */
  function fillGrid(grid, rows, startRow, startCol, whole) {
    var cells = gridCells(grid);
    startRow = startRow || 0;
    startCol = startCol || 0;
    var needRows = cells.length - startRow;
    var needCols = cells[0].length - startCol;
    var tooBig = rows.length > needRows || rows[0].length > needCols;
    var tooSmall = whole && (rows.length < needRows || rows[0].length < needCols);
    if (tooBig || tooSmall) {
      return (
        "That is a " + rows.length + " × " + rows[0].length + " matrix, but the answer is " +
        cells.length + " × " + cells[0].length + "."
      );
    }
    rows.forEach(function (row, r) {
      row.forEach(function (value, c) {
        var cell = cells[startRow + r][startCol + c];
        if (cell.value === value) return;
        cell.value = value;
        // An edit as if typed: the answer's key is renewed and its draft kept.
        cell.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
    return null;
  }

  function moveFocus(cells, position, rowStep, colStep) {
    var row = position.row + rowStep;
    var col = position.col + colStep;
    if (row < 0 || row >= cells.length || col < 0 || col >= cells[0].length) return false;
    cells[row][col].focus();
    cells[row][col].select();
    return true;
  }

  function caretAtStart(input) {
    return input.selectionStart === 0 && input.selectionEnd === 0;
  }

  function caretAtEnd(input) {
    return input.selectionStart === input.value.length && input.selectionEnd === input.value.length;
  }

  function onGridKeydown(grid, event) {
    var input = event.target;
    if (input.tagName !== "INPUT") return;
    var cells = gridCells(grid);
    var position = cellPosition(cells, input);
    if (!position) return;
    var moved = false;
    if (event.key === "ArrowUp") moved = moveFocus(cells, position, -1, 0);
    else if (event.key === "ArrowDown") moved = moveFocus(cells, position, 1, 0);
    else if (event.key === "ArrowLeft" && caretAtStart(input)) moved = moveFocus(cells, position, 0, -1);
    else if (event.key === "ArrowRight" && caretAtEnd(input)) moved = moveFocus(cells, position, 0, 1);
    if (moved) event.preventDefault();
  }

  function announce(grid, message, isError) {
    var status = grid.parentNode.querySelector("[data-grid-status]");
    if (!status) return;
    status.textContent = message;
    status.classList.toggle("is-error", Boolean(isError));
  }

  function pasteIntoGrid(grid, text, startRow, startCol, whole) {
    var parsed = parseMatrixText(text);
    if (parsed.error) {
      announce(grid, parsed.error, true);
      return false;
    }
    var problem = fillGrid(grid, parsed.rows, startRow, startCol, whole);
    if (problem) {
      announce(grid, problem, true);
      return false;
    }
    announce(grid, "Filled " + parsed.rows.length + " × " + parsed.rows[0].length + " entries.", false);
    return true;
  }

  function onCellPaste(grid, event) {
    var text = (event.clipboardData || window.clipboardData).getData("text");
    // A single number pastes as usual; a block fills the grid from this cell on.
    if (!/[\s,;\t\[]/.test(text.trim())) return;
    var position = cellPosition(gridCells(grid), event.target);
    if (!position) return;
    event.preventDefault();
    pasteIntoGrid(grid, text, position.row, position.col);
  }

  /* " for part (b)", to name a control of an answer form after its part: a page holds
     several parts, and a screen reader should not hear "Fill the grid" three times. The
     label is the page's own (data-part-label), set as text, never as HTML. */
  function partSuffix(element) {
    var form = element.closest("form[data-part-label]");
    return form ? " for part " + form.dataset.partLabel : "";
  }

  function visuallyHidden(text) {
    var span = document.createElement("span");
    span.className = "aq-visually-hidden";
    span.textContent = text;
    return span;
  }

  function buildPasteBox(grid) {
    var id = (grid.id || "grid-" + Math.random().toString(36).slice(2)) + "-paste";
    var details = document.createElement("details");
    details.className = "aq-paste";
    details.innerHTML =
      "<summary>Paste a whole matrix</summary>" +
      '<label for="' + id + '">Rows on lines, <code>;</code> between rows, <code>[[…], […]]</code>, ' +
      "or cells copied from a spreadsheet</label>" +
      '<textarea id="' + id + '" rows="4" cols="40" spellcheck="false" autocomplete="off" autocapitalize="off" autocorrect="off" data-paste-source></textarea>' +
      '<button type="button" data-paste-fill>Fill the grid</button>';
    var suffix = partSuffix(grid);
    if (suffix) {
      details.querySelector("summary").appendChild(visuallyHidden(suffix));
      details.querySelector("label").prepend(visuallyHidden("Matrix" + suffix + ": "));
      details.querySelector("[data-paste-fill]").appendChild(visuallyHidden(suffix));
    }
    var status = document.createElement("p");
    status.className = "aq-grid-status";
    status.setAttribute("data-grid-status", "");
    status.setAttribute("role", "status");
    grid.insertAdjacentElement("afterend", details);
    details.insertAdjacentElement("afterend", status);
    details.querySelector("[data-paste-fill]").addEventListener("click", function () {
      if (pasteIntoGrid(grid, details.querySelector("[data-paste-source]").value, 0, 0, true)) {
        gridCells(grid)[0][0].focus();
      }
    });
  }

  function enhanceGrid(grid) {
    if (grid.dataset.enhanced === "1") return;
    grid.dataset.enhanced = "1";
    grid.addEventListener("keydown", function (event) {
      onGridKeydown(grid, event);
    });
    grid.addEventListener("paste", function (event) {
      onCellPaste(grid, event);
    });
    grid.addEventListener("input", cellEdited);
    buildPasteBox(grid);
    showScriptOnlyHelp(grid);
  }

  /* The grid's help names the arrow keys and pasting a whole matrix only once they work:
     the page's HTML hides that sentence ([data-grid-script-help]), since without this
     script a student can only type each cell. Found through the grid's aria-describedby,
     in its own form (a page holds several grids). */
  function showScriptOnlyHelp(grid) {
    var scope = grid.closest("form") || grid.parentNode;
    if (!scope) return;
    (grid.getAttribute("aria-describedby") || "").split(/\s+/).forEach(function (id) {
      var help = id ? scope.querySelector("#" + CSS.escape(id)) : null;
      if (!help) return;
      help.querySelectorAll("[data-grid-script-help]").forEach(function (sentence) {
        sentence.hidden = false;
      });
    });
  }

  // -------------------------------------------------------- live previews

  /* The CSRF cookie holds the current secret; a page's own token is stale once the
     student signed in again in another tab (signing in renews the secret). */
  function cookieCsrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function csrfToken(element) {
    var fresh = cookieCsrfToken();
    if (fresh) return fresh;
    var form = element.closest("form");
    var field = form && form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function previewOptions(input) {
    try {
      return JSON.parse(input.dataset.previewOptions || "{}");
    } catch (error) {
      return {};
    }
  }

  function requestPreview(input, answerType, answer, signal) {
    return fetch(input.dataset.previewUrl || DEFAULT_PREVIEW_URL, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(input) },
      body: JSON.stringify({ type: answerType, answer: answer, options: previewOptions(input) }),
      signal: signal,
    }).then(function (response) {
      return response.json();
    });
  }

  function showPreview(output, input, result) {
    output.innerHTML = "";
    output.classList.toggle("is-error", Boolean(result.error));
    if (result.error) {
      input.setAttribute("aria-invalid", "true");
      var message = document.createElement("span");
      message.className = "aq-preview-error";
      message.textContent = result.error;
      output.appendChild(message);
    } else {
      input.removeAttribute("aria-invalid");
      if (result.latex) {
        var label = document.createElement("span");
        label.className = "aq-preview-label";
        label.textContent = "Read as: ";
        var maths = document.createElement("span");
        maths.className = "aq-preview-math";
        output.appendChild(label);
        output.appendChild(maths);
        typesetInto(maths, result.latex);
      }
    }
  }

  /* Debounced preview; a newer keystroke aborts the request of an older one. */
  function livePreview(input, output, answerType, readAnswer, show) {
    var timer = null;
    var inFlight = null;
    function update() {
      var answer = readAnswer();
      if (inFlight) inFlight.abort();
      if (!String(answer).trim()) {
        output.innerHTML = "";
        input.removeAttribute("aria-invalid");
        return;
      }
      inFlight = new AbortController();
      var controller = inFlight;
      requestPreview(input, answerType, answer, controller.signal)
        .then(function (result) {
          if (controller === inFlight) show(result);
        })
        .catch(function (error) {
          if (error.name !== "AbortError") show({ latex: null, error: "Preview unavailable." });
        });
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, PREVIEW_DELAY_MS);
    });
    if (String(readAnswer()).trim()) update();
  }

  function outputFor(input) {
    var form = input.closest("form") || document;
    return form.querySelector('output[for="' + input.id + '"]');
  }

  // ------------------------------------------- optional visual editor

  var mathLiveLoading = null;
  var mathKeyboardSheetLoading = null;

  /* MathLive is 800 kB, so it is fetched only when a student asks for the visual
     editor; its fonts come from our static folder and it plays no sounds. Our sheet for
     its virtual keyboard comes with it (a missing sheet does not stop the editor). */
  function loadMathLive() {
    if (mathLiveLoading) return mathLiveLoading;
    var sheet = loadMathKeyboardSheet();
    var script = new Promise(function (resolve, reject) {
      var element = document.createElement("script");
      element.src = STATIC_BASE + "vendor/mathlive/mathlive.min.js";
      element.onload = function () {
        window.MathfieldElement.fontsDirectory = STATIC_BASE + "vendor/mathlive/fonts/";
        window.MathfieldElement.soundsDirectory = null;
        followMathKeyboard(window.mathVirtualKeyboard);
        resolve(window.MathfieldElement);
      };
      element.onerror = function () {
        mathLiveLoading = null;
        reject(new Error("MathLive could not be loaded"));
      };
      document.head.appendChild(element);
    });
    mathLiveLoading = Promise.all([script, sheet]).then(function (loaded) {
      return loaded[0];
    });
    return mathLiveLoading;
  }

  function loadMathKeyboardSheet() {
    if (mathKeyboardSheetLoading) return mathKeyboardSheetLoading;
    mathKeyboardSheetLoading = new Promise(function (resolve) {
      var link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = STATIC_BASE + "attnquiz/css/math-keyboard.css";
      link.onload = link.onerror = resolve;
      document.head.appendChild(link);
    });
    return mathKeyboardSheetLoading;
  }

  /* MathLive's virtual keyboard (touch screens) is fixed over the foot of the window, where
     it hid the editor and the part's Submit button. While it is shown, its height is
     --keyboard-inset-height on <html>, which css/math-keyboard.css turns into room below
     the page and a scroll padding, and the focused editor and its Submit are kept above it. */
  function followMathKeyboard(keyboard) {
    if (!keyboard || !keyboard.addEventListener) return;
    keyboard.addEventListener("geometrychange", function () {
      var height = keyboard.visible ? Math.ceil(keyboard.boundingRect.height) : 0;
      var root = document.documentElement;
      root.classList.toggle("aq-math-keyboard-shown", height > 0);
      if (height > 0) root.style.setProperty("--keyboard-inset-height", height + "px");
      else root.style.removeProperty("--keyboard-inset-height");
      keepEditorAboveMathKeyboard(document.activeElement);
    });
  }

  /* Scrolls as little as needed for the focused editor and its part's Submit button to show
     between the top of the window and the keyboard; the editor wins when both do not fit. */
  function keepEditorAboveMathKeyboard(field) {
    if (!document.documentElement.classList.contains("aq-math-keyboard-shown")) return;
    if (!field || !field.classList || !field.classList.contains("aq-mathfield")) return;
    var form = field.closest("form");
    var submit = form && form.querySelector('button[type="submit"]');
    if (submit) submit.scrollIntoView({ block: "nearest" });
    field.scrollIntoView({ block: "nearest" });
  }

  /* MathLive's ascii-math is close to what our parser reads; these fix the rest:
     d_("model") and d_(m o d e l) -> d_model, and a space after an exponent so
     sigma_q^2sigma_k^2 stays a product. The live preview shows the final reading. */
  function asciiFromMathfield(text) {
    return String(text || "")
      .replace(/_\(\s*"([A-Za-z]+)"\s*\)/g, "_$1")
      .replace(/_\(((?:[A-Za-z] )+[A-Za-z])\)/g, function (match, letters) {
        return "_" + letters.replace(/ /g, "");
      })
      .replace(/\^(\d+)(?=[A-Za-z(])/g, "^$1 ")
      .replace(/\s+/g, " ")
      .trim();
  }

  /* The typed answer, as the server's tokeniser splits it (grading/core/safe_expr.py):
     numbers, names (d_k, sigma_q, d_model), ^ or ** and + - * / ( ) ,; null for anything
     else (LaTeX, Unicode symbols, |x|), which our own conversion does not try. */
  var ANSWER_TOKEN = /\s+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[A-Za-z][A-Za-z0-9_]*|\*\*|[-+*\/^(),]/y;

  function answerTokens(text) {
    var tokens = [];
    var position = 0;
    text = String(text || "");
    while (position < text.length) {
      ANSWER_TOKEN.lastIndex = position;
      var match = ANSWER_TOKEN.exec(text);
      if (!match) return null;
      if (!/^\s/.test(match[0])) tokens.push(match[0] === "**" ? "^" : match[0]);
      position = ANSWER_TOKEN.lastIndex;
    }
    return tokens;
  }

  var GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho " +
    "sigma tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega").split(" ");
  var EDITOR_FUNCTIONS = ["sqrt", "exp", "log", "ln", "sin", "cos", "tan"];

  function nameLatex(name) {
    var cut = name.indexOf("_");
    var base = cut < 0 ? name : name.slice(0, cut);
    var sub = cut < 0 ? "" : name.slice(cut + 1);
    var latex = GREEK.indexOf(base) >= 0 ? "\\" + base + " " : base.length === 1 ? base : "\\mathrm{" + base + "}";
    if (sub) latex += "_{" + (GREEK.indexOf(sub) >= 0 ? "\\" + sub + " " : sub) + "}";
    return latex;
  }

  /* A typed answer as LaTeX for the visual editor, read as the server reads it: d_model/h is
     d_{model}/h, 1/sqrt(d_k) is 1/\sqrt{d_{k}}, x^(1/2) is x^{1/2}, 2^3^2 is 2^{3^{2}}.
     Division stays a slash, so the editor's plain text comes back as it was typed. Null when
     the text is not in that grammar or its brackets do not match. */
  function latexFromAnswerText(text) {
    var tokens = answerTokens(text);
    if (tokens === null) return null;
    var i = 0;
    function fail() {
      throw new Error("not in the answer grammar");
    }
    function bracketed() {
      i += 1; // "("
      var inner = sequence();
      if (tokens[i] !== ")") fail();
      i += 1;
      return inner;
    }
    function sequence() {
      var out = "";
      while (i < tokens.length && tokens[i] !== ")") out += item();
      return out;
    }
    function operand() {
      var token = tokens[i];
      if (token === undefined) fail();
      if (token === "(") return "(" + bracketed() + ")";
      if (/^[0-9.]/.test(token)) {
        i += 1;
        return token;
      }
      if (!/^[A-Za-z]/.test(token)) fail();
      i += 1;
      if (EDITOR_FUNCTIONS.indexOf(token) >= 0 && tokens[i] === "(") {
        var argument = bracketed();
        return token === "sqrt" ? "\\sqrt{" + argument + "}" : "\\" + token + "(" + argument + ")";
      }
      return nameLatex(token);
    }
    function exponent() {
      var sign = "";
      if (tokens[i] === "-" || tokens[i] === "+") {
        sign = tokens[i];
        i += 1;
      }
      var base = tokens[i] === "(" ? bracketed() : operand();
      if (tokens[i] === "^") {
        i += 1;
        base += "^{" + exponent() + "}"; // a power of a power is right-associative
      }
      return sign + base;
    }
    function item() {
      var token = tokens[i];
      if (token === "^") {
        i += 1;
        return "^{" + exponent() + "}";
      }
      if (token === "*") {
        i += 1;
        return "\\cdot ";
      }
      if (token === "+" || token === "-" || token === "/" || token === ",") {
        i += 1;
        return token;
      }
      return operand();
    }
    try {
      var latex = sequence();
      if (i !== tokens.length) fail(); // a ")" without its "("
      return latex;
    } catch (error) {
      return null;
    }
  }

  /* Do two typed answers read the same? Their tokens are compared, so spaces count only
     where they part two names (sigma_q sigma_k), and x^(2) is x^2, x^(-1) is x^-1. */
  function sameAnswerText(left, right) {
    function key(text) {
      var tokens = answerTokens(text);
      if (tokens === null) return "\u0000" + String(text || "").replace(/\s+/g, " ").trim();
      var kept = [];
      for (var k = 0; k < tokens.length; k++) {
        var sign = tokens[k + 2] === "-" || tokens[k + 2] === "+" ? 1 : 0;
        var operand = tokens[k + 2 + sign];
        if (tokens[k] === "^" && tokens[k + 1] === "(" && operand && /^[A-Za-z0-9.]/.test(operand) &&
            tokens[k + 3 + sign] === ")") {
          kept.push("^");
          if (sign) kept.push(tokens[k + 2]);
          kept.push(operand);
          k += 3 + sign;
        } else {
          kept.push(tokens[k]);
        }
      }
      return kept.join(" ");
    }
    return key(left) === key(right);
  }

  var EDITOR_INEXACT =
    "The visual editor cannot show this answer exactly as typed. What you typed stays in the text box " +
    "until you change the answer in the editor; from then on the editor's answer replaces it.";

  /* In the editor a subscript stays open until the caret leaves it (→), so typing d_k*sigma^2
     straight on gives d_{k·σ²}, which the text box holds as d_(k * sigma^2) and the server
     reads as a call of a function 'd_'. The subscript that holds more than a name, if any:
     {base: "d", sub: "k * sigma^2"}. */
  function compoundSubscript(text) {
    var match = /(?:^|[^A-Za-z0-9_])([A-Za-z][A-Za-z0-9]*)_\(([^()]*[\s*+\-\/^][^()]*)\)/.exec(String(text || ""));
    return match ? { base: match[1], sub: match[2].trim() } : null;
  }

  function compoundSubscriptNote(found) {
    return "The subscript of " + found.base + " holds " + found.sub + ". In the visual editor a subscript " +
      "goes on until you leave it: press → (the right arrow key) after " + found.base + "'s subscript, " +
      "then type the rest.";
  }

  function addVisualEditorToggle(input) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "aq-secondary";
    function setButtonText(text) {
      button.textContent = text;
      if (partSuffix(input)) button.appendChild(visuallyHidden(partSuffix(input)));
    }
    setButtonText("Visual editor");
    button.setAttribute("aria-pressed", "false");
    button.setAttribute("data-visual-editor-toggle", "");
    input.insertAdjacentElement("afterend", button);
    var field = null;
    var note = null;
    var writing = false; // the editor is writing into the text box

    /* The editor shows the text box's answer; the note says when it cannot show it exactly
       (then the text box is left alone until the student changes the editor). */
    function showTypedAnswer() {
      var text = input.value;
      var latex = text.indexOf("\\") >= 0 ? text : latexFromAnswerText(text); // typed LaTeX is read as such
      if (latex !== null) field.setValue(latex, { format: "latex", silenceNotifications: true });
      else field.setValue(text, { format: "ascii-math", silenceNotifications: true }); // MathLive's best reading
      var exact = sameAnswerText(asciiFromMathfield(field.getValue("ascii-math")), text);
      note.textContent = exact ? "" : EDITOR_INEXACT;
      note.hidden = exact;
      field.dataset.exact = exact ? "1" : "0";
    }

    // Typing in the text box while the editor is there updates the editor.
    input.addEventListener("input", function () {
      if (field && !writing) showTypedAnswer();
    });

    button.addEventListener("click", function () {
      if (field) {
        var showing = field.hidden;
        field.hidden = !showing;
        note.hidden = !showing || !note.textContent;
        button.setAttribute("aria-pressed", String(showing));
        if (showing) field.focus();
        return;
      }
      // Busy, not disabled: disabling the focused button sends the focus to the page's body,
      // sometimes after the editor took it (then neither has it and typing goes nowhere).
      if (button.getAttribute("aria-disabled") === "true") return;
      button.setAttribute("aria-disabled", "true");
      loadMathLive()
        .then(function (MathfieldElement) {
          field = new MathfieldElement();
          field.setAttribute("aria-label", "Visual maths editor" + (partSuffix(input) || " for the answer"));
          field.className = "aq-mathfield";
          note = document.createElement("p");
          note.className = "aq-help aq-mathfield-note";
          note.id = input.id + "-editor-note";
          note.setAttribute("aria-live", "polite");
          note.setAttribute("data-visual-editor-note", "");
          note.hidden = true;
          field.setAttribute("aria-describedby", note.id);
          button.insertAdjacentElement("afterend", field);
          field.insertAdjacentElement("afterend", note);
          // The preview or a note growing under the editor must not push Submit under the keyboard.
          if (window.ResizeObserver && input.form) {
            new ResizeObserver(function () {
              if (document.activeElement === field) keepEditorAboveMathKeyboard(field);
            }).observe(input.form);
          }
          showTypedAnswer(); // starts from what was typed, never empty over it
          // Only a change the student makes in the editor is written back to the text box.
          field.addEventListener("input", function () {
            writing = true;
            try {
              input.value = asciiFromMathfield(field.getValue("ascii-math"));
              input.dispatchEvent(new Event("input", { bubbles: true }));
            } finally {
              writing = false;
            }
            field.dataset.exact = "1";
            var stuck = compoundSubscript(input.value);
            note.textContent = stuck ? compoundSubscriptNote(stuck) : "";
            note.hidden = !stuck;
          });
          button.setAttribute("aria-pressed", "true");
          field.focus();
          field.position = field.lastOffset; // the caret after the answer, to go on typing
        })
        .catch(function () {
          setButtonText("Visual editor unavailable");
        })
        .finally(function () {
          button.removeAttribute("aria-disabled");
        });
    });
  }

  function enhanceSymbolicInput(input) {
    if (input.dataset.enhanced === "1") return;
    input.dataset.enhanced = "1";
    var output = outputFor(input);
    if (!output) return;
    if (input.dataset.visualEditor === "1") addVisualEditorToggle(input);
    livePreview(
      input,
      output,
      input.dataset.preview,
      function () {
        return input.value;
      },
      function (result) {
        showPreview(output, input, result);
        if (!result.error && result.latex) clearFormatError(input);
      }
    );
  }

  /* The format error (a 422's "⚠ …") shown in a part's result place once the live preview
     reads what is in the box now: it was about an earlier answer, and left there it
     contradicts the preview. */
  function clearFormatError(element) {
    var form = element.closest("form.answer-form");
    var target = form && document.querySelector(form.getAttribute("hx-target") || "");
    var error = target && target.querySelector("[data-result=invalid]");
    if (!error) return;
    error.remove();
    if (!target.textContent.trim()) target.replaceChildren(); // empty again, so hidden (.result:empty)
  }

  /* The non-empty lines, each with its number in the box (a blank line still counts, as
     in the grader's messages) and as typed, so a position in an error is the line's own. */
  function splitDerivationSteps(text) {
    return String(text || "")
      .split(/\r?\n/)
      .map(function (line, index) {
        return { number: index + 1, text: line };
      })
      .filter(function (line) {
        return line.text.trim() !== "";
      });
  }

  /* One preview per line: each non-empty line is sent on its own so an error
     names the line it belongs to; the list item carries the line's number. */
  function enhanceDerivationInput(textarea) {
    if (textarea.dataset.enhanced === "1") return;
    textarea.dataset.enhanced = "1";
    var list = document.createElement("ol");
    list.className = "aq-derivation-preview";
    list.setAttribute("aria-live", "polite");
    list.setAttribute("aria-label", "How each step was read");
    textarea.insertAdjacentElement("afterend", list);
    var stepType = textarea.dataset.stepPreview || "symbolic";
    var timer = null;
    var generation = 0;
    function update() {
      var steps = splitDerivationSteps(textarea.value);
      var mine = ++generation;
      var readSteps = 0;
      list.innerHTML = "";
      steps.forEach(function (step) {
        var item = document.createElement("li");
        item.value = step.number;
        var output = document.createElement("output");
        item.appendChild(output);
        list.appendChild(item);
        requestPreview(textarea, stepType, step.text)
          .then(function (result) {
            // The list numbers the lines already; a line sent alone is always "Line 1".
            if (result.error) result.error = result.error.replace(/^(?:Step|Line) \d+:\s*/, "");
            if (mine !== generation) return;
            showPreview(output, textarea, result);
            if (!result.error && result.latex && ++readSteps === steps.length) clearFormatError(textarea);
          })
          .catch(function () {
            if (mine === generation) output.textContent = "Preview unavailable.";
          });
      });
    }
    textarea.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, PREVIEW_DELAY_MS);
    });
    // A reloaded page holds the last derivation sent: show how its steps were read.
    if (textarea.value.trim()) update();
  }

  // ------------------------------------------------------------ results

  function formForPart(part) {
    return part ? document.getElementById("form-" + part) : null;
  }

  function partOfResult(result) {
    if (result.dataset.part) return result.dataset.part;
    var container = result.closest("[id^='result-']");
    return container ? container.id.slice("result-".length) : null;
  }

  function setSubmitDisabled(form, disabled) {
    if (form.classList.contains("is-expired")) disabled = true; // the time limit has passed
    form.querySelectorAll("button[type=submit]").forEach(function (button) {
      button.disabled = disabled;
    });
  }

  /* Mark grid cells the grader rejected: a red outline AND aria-invalid, so the
     signal reaches screen readers too. entry_correct is flat or nested by row. An empty
     cell is never marked: a mark says "this entry was wrong", and a reloaded page whose
     grid could not be refilled with the answer has no entry to point at. */
  function flatten(list) {
    return [].concat.apply([], list.map(function (entry) {
      return Array.isArray(entry) ? entry : [entry];
    }));
  }

  function markGridEntries(form, entryCorrect, gradedAnswer) {
    var grid = form.querySelector(".matrix-grid");
    if (!grid || !Array.isArray(entryCorrect)) return;
    var flat = flatten(entryCorrect);
    // A cell holding something other than the graded entry (a draft restored after a
    // reload) is not what the grade was about.
    var graded = Array.isArray(gradedAnswer) ? flatten(gradedAnswer) : null;
    grid.querySelectorAll("input").forEach(function (input, index) {
      var typed = input.value.trim();
      var wrong = flat[index] === false && typed !== "" &&
        (!graded || normalText(graded[index] === undefined ? "" : graded[index]) === normalText(typed));
      input.classList.toggle("is-wrong-cell", wrong);
      if (wrong) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    });
  }

  /* The server's format error names the first entry it could not read; the grid marks
     every one (aria-invalid, so a screen reader hears it on each cell): an empty cell at
     once, a plain decimal never, anything else as the server's own number reader says
     (the live preview's numeric reading, one request per such cell). A cell loses its mark
     when it is edited. */
  var PLAIN_DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,2})?$/;

  function markUnreadableCells(form) {
    var grid = form.querySelector(".matrix-grid");
    if (!grid) return;
    grid.querySelectorAll("input").forEach(function (cell) {
      var value = cell.value.trim();
      if (!value) { markUnreadableCell(cell, true); return; }
      if (PLAIN_DECIMAL.test(value)) { markUnreadableCell(cell, false); return; }
      requestPreview(cell, "numeric", value)
        .then(function (result) {
          if (cell.value.trim() === value) markUnreadableCell(cell, Boolean(result.error));
        })
        .catch(function () { /* no reply: the server's message still names the first */ });
    });
  }

  function markUnreadableCell(cell, unreadable) {
    cell.classList.toggle("is-unreadable-cell", unreadable);
    if (unreadable) cell.setAttribute("aria-invalid", "true");
    else if (!cell.classList.contains("is-wrong-cell")) cell.removeAttribute("aria-invalid");
  }

  function cellEdited(event) {
    var cell = event.target;
    if (cell.classList && cell.classList.contains("is-unreadable-cell")) markUnreadableCell(cell, false);
    // A paste's error (a matrix of another size) is about the grid as it was: once a cell
    // changes it is stale, and left there it contradicts what the student sees.
    var status = event.currentTarget && event.currentTarget.parentNode.querySelector("[data-grid-status].is-error");
    if (status) announce(event.currentTarget, "", false);
  }

  function finishPart(form) {
    form.querySelectorAll("input, textarea, button, select").forEach(function (control) {
      if (control.name !== "csrfmiddlewaretoken") control.disabled = true;
    });
    form.classList.add("is-finished");
  }

  /* A correct answer ends the part: its attempts line says "Solved" as the reloaded page
     does (exercise_page.html), not only the result under the form. */
  function markPartSolved(form) {
    var section = form.closest("section.part");
    var line = section && section.querySelector("p.attempts");
    if (!line) return;
    var already = Array.prototype.some.call(line.querySelectorAll("strong"), function (strong) {
      return strong.textContent.trim() === "Solved";
    });
    if (already) return;
    var mark = document.createElement("strong");
    mark.textContent = "Solved";
    if (line.textContent.trim()) line.appendChild(document.createTextNode(" · "));
    line.appendChild(mark);
  }

  function applyResult(result) {
    var form = formForPart(partOfResult(result));
    if (!form) {
      storedAnswerOutsideForm(result);
      return;
    }
    var state = result.dataset.result;
    storedAnswerLearned(form, result);
    if (state === "pending") {
      setSubmitDisabled(form, true); // one answer in flight at a time
      return;
    }
    setSubmitDisabled(form, false);
    focusFeedback(form, result);
    if (state === "invalid") {
      markUnreadableCells(form);
      return;
    }
    if (state === "saved") {
      // An exam's answer is only saved: no verdict to mark, but no attempts left ends it.
      if (result.dataset.finished === "1") finishPart(form);
      return;
    }
    if (state !== "graded") return;
    if (result.dataset.entryCorrect) {
      try {
        markGridEntries(form, JSON.parse(result.dataset.entryCorrect), storedAnswerOf(result));
      } catch (error) {
        /* malformed details only lose the highlighting */
      }
    }
    if (result.classList.contains("is-correct")) markPartSolved(form);
    if (result.dataset.finished === "1") finishPart(form);
  }

  // ------------------------------------------------- explorations: slider

  function enhanceDkSlider(slider) {
    if (slider.dataset.enhanced === "1") return;
    slider.dataset.enhanced = "1";
    var output = document.querySelector('output[for="' + slider.id + '"]');
    slider.addEventListener("input", function () {
      var d_k = Math.pow(2, Number(slider.value));
      slider.setAttribute("aria-valuetext", "d_k = " + d_k);
      if (output) output.textContent = String(d_k);
    });
  }

  // ------------------------------------------- scroll boxes and focus

  /* Wide maths and heatmaps scroll inside their own box on a phone. A box that does
     scroll must be reachable by keyboard, so it is made focusable exactly while it
     overflows (no extra tab stops on a wide screen). */
  var SCROLL_BOXES = ".katex-display, .aq-heatmap, .matrix-grid, .prompt, .part-prompt, .hints, .solution";

  function updateScrollBoxes(root) {
    (root || document).querySelectorAll(SCROLL_BOXES).forEach(function (box) {
      var overflows = box.scrollWidth > box.clientWidth + 1;
      if (overflows && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.dataset.scrollFocus = "1";
      } else if (!overflows && box.dataset.scrollFocus === "1") {
        box.removeAttribute("tabindex");
        delete box.dataset.scrollFocus;
      }
    });
  }

  var scrollBoxFrame = null;
  window.addEventListener("resize", function () {
    if (scrollBoxFrame) cancelAnimationFrame(scrollBoxFrame);
    scrollBoxFrame = requestAnimationFrame(function () {
      scrollBoxFrame = null;
      updateScrollBoxes(document);
    });
  });

  /* After the student submits, focus moves to the feedback once it arrives (the grade
     or the format error), so keyboard and screen-reader users land on it. */
  function focusFeedback(form, result) {
    if (!form || form.dataset.awaitingFeedback !== "1") return;
    delete form.dataset.awaitingFeedback;
    if (!result.hasAttribute("tabindex")) result.setAttribute("tabindex", "-1");
    result.focus({ preventScroll: false });
  }

  // ------------------------------------------------ unsent answers

  /*
   * What a part's answer form holds is compared with what the server stored, as the server
   * would store it (grading.answer_input): a grid's cells as rows of trimmed entries, one
   * "answer" field as its text, several (or a multiple choice) as a list. Spaces and blank
   * lines do not make two answers differ. Each form knows two answers:
   *   aqKnownKey   what the page restored on load, or last sent and saw stored;
   *   aqStoredKey  the part's latest stored answer (its result's data-answer), and whether it
   *                counts (aqStoredCounts: saved, waiting for its grade or graded; not one we
   *                could not grade): the server refuses it again ("unchanged",
   *                grading.services), so the page does not send it.
   * An answer that is neither is unsent: it is kept as a draft in this tab's sessionStorage
   * (never sent anywhere), restored after a reload, named before the time runs out and,
   * once the page takes no answers, listed so the student can tell their instructor.
   */
  var CELL_FIELD = /^cell-(\d{1,3})-(\d{1,3})$/;
  var DRAFT_PREFIX = "attnquiz.draft:";
  var DRAFT_RESTORED = "Restored what you typed before the reload; it is not sent yet.";
  var SAME_ANSWER = "You already sent this answer; change it to try again.";
  var CLOSED_PHRASES = {
    time: "before the time ran out",
    you: "before you finished your attempt",
    instructor: "before your instructor closed the exam",
    close: "before the assignment closed",
  };
  var leavingOnPurpose = false;

  /* [name, value] of every answer field (not the form's token or the answer's key). */
  function formFields(form) {
    var pairs = [];
    new FormData(form).forEach(function (value, name) {
      if (name !== "csrfmiddlewaretoken" && name !== "submission_key") pairs.push([name, String(value)]);
    });
    return pairs;
  }

  /* The answer the fields make, as the server stores it; null without any answer field. */
  function answerFromFields(pairs) {
    var cells = [];
    var answers = [];
    var multiple = false;
    pairs.forEach(function (pair) {
      var cell = CELL_FIELD.exec(pair[0]);
      if (cell) cells.push([Number(cell[1]), Number(cell[2]), pair[1].trim()]);
      else if (pair[0] === "answer") answers.push(pair[1]);
      else if (pair[0] === "multiple") multiple = pair[1] === "1";
    });
    if (cells.length) {
      var rows = 1 + Math.max.apply(null, cells.map(function (cell) { return cell[0]; }));
      var cols = 1 + Math.max.apply(null, cells.map(function (cell) { return cell[1]; }));
      var grid = [];
      for (var r = 0; r < rows; r++) {
        grid.push([]);
        for (var c = 0; c < cols; c++) grid[r].push("");
      }
      cells.forEach(function (cell) { grid[cell[0]][cell[1]] = cell[2]; });
      return grid;
    }
    if (!answers.length) return null;
    return answers.length === 1 && !multiple ? answers[0] : answers;
  }

  /* A text with its lines trimmed, inner runs of spaces made one and blank lines dropped. */
  function normalText(text) {
    return String(text)
      .replace(/\r\n?/g, "\n")
      .split("\n")
      .map(function (line) { return line.trim().replace(/\s+/g, " "); })
      .filter(function (line) { return line !== ""; })
      .join("\n");
  }

  /* One string per answer, equal for answers that differ only in spaces; null for an
     answer with nothing in it (an empty box, an empty grid, nothing chosen). */
  function answerKey(answer) {
    var typed = false;
    function normal(value) {
      if (Array.isArray(value)) return value.map(normal);
      if (value === null || value === undefined) return "";
      var text = normalText(typeof value === "object" ? JSON.stringify(value) : value);
      if (text !== "") typed = true;
      return text;
    }
    if (answer === null || answer === undefined) return null;
    var normalised = normal(answer);
    return typed ? JSON.stringify(normalised) : null;
  }

  function formAnswerKey(form) {
    return answerKey(answerFromFields(formFields(form)));
  }

  /* The answer a result element is about (its data-answer), or undefined. */
  function storedAnswerOf(result) {
    if (!result || result.dataset.answer === undefined) return undefined;
    try {
      return JSON.parse(result.dataset.answer);
    } catch (error) {
      return undefined;
    }
  }

  /* Graded, or saved while the review policy hides the grade: the same answer again would
     be graded the same and use an attempt. A pending or ungradable one may be sent again. */
  /* The stored answer counts as an attempt, as the server decides "unchanged": saved,
     waiting for its grade (pending, or for a person) or graded; an answer we could not
     grade may be sent again. */
  function storedAnswerCounts(result) {
    var state = result.dataset.result;
    if (state === "saved" || state === "pending") return true;
    return state === "graded" && !result.classList.contains("status-could_not_grade");
  }

  function resultOfForm(form) {
    var target = document.querySelector(form.getAttribute("hx-target") || "");
    return target && target.querySelector("[data-result][data-answer]");
  }

  function takesAnswers(form) {
    return !["is-finished", "is-expired", "is-taken-over"].some(function (name) {
      return form.classList.contains(name);
    });
  }

  function isUnsent(form) {
    if (!takesAnswers(form)) return false;
    var key = formAnswerKey(form);
    return key !== null && key !== form.aqKnownKey && key !== form.aqStoredKey;
  }

  function hasUnsentAnswer() {
    return Array.prototype.some.call(document.querySelectorAll("form.answer-form"), isUnsent);
  }

  function reloadPage() {
    leavingOnPurpose = true;
    window.location.reload();
  }

  window.addEventListener("beforeunload", function (event) {
    if (leavingOnPurpose || !hasUnsentAnswer()) return;
    event.preventDefault();
    event.returnValue = ""; // older browsers ask only when this is set
  });

  // Drafts: in this tab only (sessionStorage), so a shared computer does not keep them once
  // the tab is closed; signing out removes them at once. Each draft names the account that
  // typed it (the page's <body data-draft-owner>): a page of another account removes it, so
  // a session that ended without signing out leaves nothing for the next person in the tab.
  function draftOwner() {
    return (document.body && document.body.dataset.draftOwner) || "";
  }

  function draftStorage() {
    try {
      return window.sessionStorage || null;
    } catch (error) {
      return null; // storage switched off: the page works without drafts
    }
  }

  function draftKeyOf(element) {
    var section = element.closest("section[data-draft-key]");
    return section ? DRAFT_PREFIX + section.dataset.draftKey : null;
  }

  function readDraft(key) {
    var storage = draftStorage();
    if (!storage || !key) return null;
    try {
      var draft = JSON.parse(storage.getItem(key) || "null");
      return draft && Array.isArray(draft.fields) && draft.owner === draftOwner() ? draft : null;
    } catch (error) {
      return null;
    }
  }

  function writeDraft(key, draft) {
    var storage = draftStorage();
    var owner = draftOwner();
    if (!storage || !key || !owner) return;
    draft.owner = owner;
    try {
      storage.setItem(key, JSON.stringify(draft));
    } catch (error) { /* full or refused: the typed answer is still on the page */ }
  }

  function removeDraft(key) {
    var storage = draftStorage();
    if (!storage || !key) return;
    try {
      storage.removeItem(key);
    } catch (error) { /* nothing to do */ }
  }

  function removeAllDrafts() {
    var storage = draftStorage();
    if (!storage) return;
    try {
      Object.keys(storage).forEach(function (key) {
        if (key.indexOf(DRAFT_PREFIX) === 0) storage.removeItem(key);
      });
    } catch (error) { /* nothing to do */ }
  }

  /* A page of a signed-in account: every draft another account left in this tab goes (a
     page without an account, such as the sign-in page, keeps them for their owner). */
  function removeDraftsOfOthers() {
    var storage = draftStorage();
    var owner = draftOwner();
    if (!storage || !owner) return;
    try {
      Object.keys(storage).forEach(function (key) {
        if (key.indexOf(DRAFT_PREFIX) !== 0) return;
        var draft = null;
        try {
          draft = JSON.parse(storage.getItem(key) || "null");
        } catch (error) { /* unreadable: not this account's */ }
        if (!draft || draft.owner !== owner) storage.removeItem(key);
      });
    } catch (error) { /* nothing to do */ }
  }

  /* The answer as a person reads it: a grid's rows on lines, a choice by its words. */
  function draftText(form, answer) {
    if (Array.isArray(answer) && answer.length && Array.isArray(answer[0])) {
      return answer.map(function (row) {
        return row.map(function (entry) { return entry === "" ? "(empty)" : entry; }).join(", ");
      }).join("\n");
    }
    var chosen = form.querySelectorAll("input[type=radio]:checked, input[type=checkbox]:checked");
    if (chosen.length) {
      return Array.prototype.map.call(chosen, function (input) {
        var label = input.closest("label");
        return (label && label.dataset.choiceText) || input.value;
      }).join("\n");
    }
    return Array.isArray(answer) ? answer.join("\n") : String(answer);
  }

  /* Keep what the form holds as its part's draft while it is unsent; drop it otherwise. */
  function syncDraft(form) {
    if (!takesAnswers(form) || form.aqFilling) return; // disabled controls read as empty: keep the draft
    var key = draftKeyOf(form);
    if (!isUnsent(form)) {
      removeDraft(key);
      setFormNote(form, "[data-draft-note]", "");
      return;
    }
    var fields = formFields(form);
    var answer = answerFromFields(fields);
    writeDraft(key, {
      fields: fields,
      answer: answer,
      text: draftText(form, answer),
      label: form.dataset.partLabel || "",
    });
  }

  /* Put a draft's fields back into its form, as if typed (previews read them again). */
  function fillForm(form, pairs) {
    var used = {};
    Array.prototype.forEach.call(form.elements, function (control) {
      var name = control.name;
      if (!name || name === "csrfmiddlewaretoken" || name === "submission_key" || control.type === "hidden") return;
      if (control.type === "radio" || control.type === "checkbox") {
        var checked = pairs.some(function (pair) { return pair[0] === name && pair[1] === control.value; });
        if (control.checked !== checked) {
          control.checked = checked;
          control.dispatchEvent(new Event("change", { bubbles: true }));
        }
        return;
      }
      if (!("value" in control) || control.tagName === "BUTTON") return;
      var values = pairs.filter(function (pair) { return pair[0] === name; });
      var index = used[name] || 0;
      used[name] = index + 1;
      var value = values[index] ? values[index][1] : "";
      if (control.value !== value) {
        control.value = value;
        control.dispatchEvent(new Event("input", { bubbles: true }));
      }
    });
  }

  /* A note of the form's own, beside its Send button (created empty: a live region is heard
     when its text changes, not when it is added). */
  function formNote(form, selector, className, role) {
    var note = form.querySelector(selector);
    if (note) return note;
    note = document.createElement("p");
    note.className = className;
    note.setAttribute(selector.slice(1, -1), "");
    note.setAttribute("role", role);
    var button = form.querySelector("button[type=submit]");
    if (button) button.insertAdjacentElement("afterend", note);
    else form.appendChild(note);
    return note;
  }

  function setFormNote(form, selector, text) {
    var note = form.querySelector(selector);
    if (note) note.textContent = text;
  }

  /* On load: what the page restored is known; a draft of this tab that differs from it and
     from the stored answer is put back, with a note that it is not sent. */
  function startDraft(form) {
    formNote(form, "[data-draft-note]", "aq-form-note aq-draft-note", "status");
    formNote(form, "[data-same-answer]", "aq-form-note aq-same-answer", "status");
    form.querySelectorAll("label.aq-choice").forEach(function (label) {
      label.dataset.choiceText = label.textContent.replace(/\s+/g, " ").trim(); // before KaTeX
    });
    form.aqKnownKey = formAnswerKey(form);
    var result = resultOfForm(form);
    form.aqStoredKey = result ? answerKey(storedAnswerOf(result)) : null;
    form.aqStoredCounts = Boolean(result && storedAnswerCounts(result));
    var key = draftKeyOf(form);
    var draft = readDraft(key);
    if (!draft) return;
    var draftKey = answerKey(draft.answer);
    if (draftKey === null || draftKey === form.aqKnownKey || draftKey === form.aqStoredKey) {
      removeDraft(key);
      return;
    }
    form.aqFilling = true; // one draft, not each field on its way
    fillForm(form, draft.fields);
    form.aqFilling = false;
    syncDraft(form);
    setFormNote(form, "[data-draft-note]", DRAFT_RESTORED);
  }

  /* A result arrived (or was on the page): its answer is stored. The answer this page sent
     is then known; a draft of the same answer is no longer unsent. */
  function storedAnswerLearned(form, result) {
    var answer = storedAnswerOf(result);
    if (answer === undefined) return;
    var key = answerKey(answer);
    form.aqStoredKey = key;
    form.aqStoredCounts = storedAnswerCounts(result);
    if (key !== null && key === form.aqSentKey) form.aqKnownKey = key;
    var draftStorageKey = draftKeyOf(form);
    var draft = readDraft(draftStorageKey);
    if (draft && answerKey(draft.answer) === key) {
      removeDraft(draftStorageKey);
      setFormNote(form, "[data-draft-note]", "");
    }
    syncDraft(form);
    refreshUnsentDrafts();
  }

  /* A part without a form (time up, attempt ended): a stored answer settles its draft. */
  function storedAnswerOutsideForm(result) {
    var key = draftKeyOf(result);
    var draft = readDraft(key);
    var answer = storedAnswerOf(result);
    if (draft && answer !== undefined && answerKey(draft.answer) === answerKey(answer)) removeDraft(key);
  }

  function sameAsStored(form) {
    if (!form.aqStoredCounts) return false;
    var key = formAnswerKey(form);
    return key !== null && key === form.aqStoredKey;
  }

  /* A matrix typed or pasted into the box and sent without "Fill the grid": the grid is
     filled from the box first, so the answer sent is the one the student sees. Only a grid
     whose every cell is empty: cells typed by hand are never overwritten. False (and the
     box's problem said beside the grid) when the box cannot fill it. */
  function gridsFilledFromPasteBoxes(form) {
    var filled = true;
    form.querySelectorAll(".matrix-grid[data-rows][data-cols]").forEach(function (grid) {
      var box = grid.nextElementSibling;
      var source = box && box.matches(".aq-paste") ? box.querySelector("[data-paste-source]") : null;
      if (!source || !source.value.trim()) return;
      var empty = Array.prototype.every.call(grid.querySelectorAll("input"), function (cell) {
        return !cell.value.trim();
      });
      if (empty && !pasteIntoGrid(grid, source.value, 0, 0, true)) {
        filled = false;
        box.open = true;
        source.focus();
      }
    });
    return filled;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!isAnswerForm(form)) return;
    if (!gridsFilledFromPasteBoxes(form)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    if (sameAsStored(form)) {
      // Not sent: htmx listens on the form, so stopping the event here keeps it from htmx.
      event.preventDefault();
      event.stopImmediatePropagation();
      var note = form.querySelector("[data-same-answer]");
      if (note) {
        note.textContent = "";
        note.textContent = SAME_ANSWER; // said again on a second click
      }
      return;
    }
    form.dataset.awaitingFeedback = "1";
    form.aqSentKey = formAnswerKey(form);
    setFormNote(form, "[data-same-answer]", "");
  }, true);

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form && form.matches && form.matches("form[action$='/logout/']")) removeAllDrafts();
  }, true);

  /* "Part (a) and part (b) have answers you have not sent." as pieces: texts, and each
     part's name with its index in ``labels`` (the page makes those links to the part). */
  function unsentSentencePieces(labels) {
    var pieces = [];
    labels.forEach(function (label, index) {
      if (index) pieces.push({ text: index === labels.length - 1 ? " and " : ", " });
      pieces.push({ text: (index ? "part " : "Part ") + label, part: index });
    });
    pieces.push({ text: labels.length > 1 ? " have answers you have not sent." : " has an answer you have not sent." });
    return pieces;
  }

  function unsentSentence(labels) {
    return unsentSentencePieces(labels).map(function (piece) { return piece.text; }).join("");
  }

  function partLink(section, text) {
    var link = document.createElement("a");
    link.href = "#" + section.id;
    link.textContent = text;
    return link;
  }

  function unsentSentenceElement(forms) {
    var sentence = document.createElement("span");
    unsentSentencePieces(forms.map(function (form) { return form.dataset.partLabel; })).forEach(function (piece) {
      if (piece.part === undefined) {
        sentence.appendChild(document.createTextNode(piece.text));
        return;
      }
      var form = forms[piece.part];
      sentence.appendChild(partLink(form.closest("section") || form, piece.text));
    });
    return sentence;
  }

  function unsentForms() {
    return Array.prototype.filter.call(document.querySelectorAll("form.answer-form"), isUnsent);
  }

  function leftPhrase(seconds) {
    if (seconds >= 60) return "1 minute left.";
    return seconds + (seconds === 1 ? " second left." : " seconds left.");
  }

  /*
   * Before the time runs out (60 s, then 10 s): the parts whose answer is typed and not sent,
   * said in the clock's alert region. Their Send buttons work until the end. A part sent
   * meanwhile leaves the list; the list is said again only at the next mark.
   */
  function unsentWarning(clock) {
    var region = clock.querySelector("[data-unsent-warning]");
    var marks = { 60: false, 10: false };
    var named = [];
    function show(forms, secondsLeft) {
      named = forms;
      region.replaceChildren();
      if (!forms.length) return;
      var strong = document.createElement("strong");
      strong.textContent = leftPhrase(secondsLeft) + " ";
      region.appendChild(strong);
      region.appendChild(unsentSentenceElement(forms));
      region.appendChild(document.createTextNode(
        " Send " + (forms.length > 1 ? "them" : "it") + " now: an answer not sent when the time runs out is not stored."));
    }
    return function update(secondsLeft) {
      if (!region) return;
      if (secondsLeft > 60 || secondsLeft <= 0) {
        marks[60] = marks[10] = false;
        if (named.length) show([], secondsLeft);
        return;
      }
      var mark = secondsLeft <= 10 ? 10 : 60;
      if (!marks[mark]) {
        marks[60] = true;
        marks[mark] = true;
        show(unsentForms(), secondsLeft);
        return;
      }
      var still = named.filter(isUnsent);
      if (still.length !== named.length) show(still, secondsLeft);
    };
  }

  /* Once the page takes no answers (the time ran out, the attempt ended): the drafts of its
     parts, shown as text (never HTML), read-only, and not sent. */
  function refreshUnsentDrafts() {
    var box = document.querySelector("[data-unsent-drafts]");
    if (!box || !box.dataset.closedBy) return;
    var drafts = [];
    document.querySelectorAll("section[data-draft-key]").forEach(function (section) {
      var form = section.querySelector("form.answer-form");
      if (form && takesAnswers(form)) return;
      var key = DRAFT_PREFIX + section.dataset.draftKey;
      var draft = readDraft(key);
      if (!draft) return;
      var result = section.querySelector("[data-result][data-answer]");
      var draftKey = answerKey(draft.answer);
      if (draftKey === null || (result && draftKey === answerKey(storedAnswerOf(result)))) {
        removeDraft(key);
        return;
      }
      drafts.push({ section: section, draft: draft, key: key });
    });
    box.replaceChildren();
    box.hidden = !drafts.length;
    if (!drafts.length) return;
    var intro = document.createElement("p");
    var strong = document.createElement("strong");
    strong.textContent = "These answers were typed but not sent " +
      (CLOSED_PHRASES[box.dataset.closedBy] || CLOSED_PHRASES.close) + ":";
    intro.appendChild(strong);
    box.appendChild(intro);
    var list = document.createElement("dl");
    list.className = "aq-unsent-drafts__list";
    drafts.forEach(function (entry) {
      var term = document.createElement("dt");
      term.appendChild(partLink(entry.section, "Part " + (entry.section.dataset.partLabel || entry.draft.label)));
      var text = document.createElement("pre");
      text.className = "aq-unsent-drafts__text";
      text.setAttribute("data-draft-text", entry.section.id.replace(/^part-/, ""));
      text.textContent = String(entry.draft.text);
      var detail = document.createElement("dd");
      detail.appendChild(text);
      list.appendChild(term);
      list.appendChild(detail);
    });
    box.appendChild(list);
    var after = document.createElement("p");
    after.textContent = "They were not stored and do not count. They stay in this browser tab only, " +
      "so you can copy them for your instructor.";
    box.appendChild(after);
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "aq-secondary";
    remove.textContent = "Remove them from this browser";
    remove.addEventListener("click", function () {
      drafts.forEach(function (entry) { removeDraft(entry.key); });
      box.replaceChildren();
      box.hidden = true;
    });
    box.appendChild(remove);
  }

  /* A part with no form and no reason to list its draft (solved, no attempts left): drop it. */
  function dropDraftsOfClosedParts() {
    var box = document.querySelector("[data-unsent-drafts]");
    if (box && box.dataset.closedBy) return;
    document.querySelectorAll("section[data-draft-key]").forEach(function (section) {
      if (!section.querySelector("form.answer-form")) removeDraft(DRAFT_PREFIX + section.dataset.draftKey);
    });
  }

  // --------------------------------------- answers the server did not take

  /* Each answer form carries a key for the answer in it (the submission_key field, read
     as the Idempotency-Key): the same until the answer is changed or a reply arrives, so
     an answer sent again after a lost reply is stored once. A busy server (503) or an
     answer sent too soon (429) stores nothing: the page says so and sends the same answer
     again after the server's Retry-After, a few times. A lost reply or a server error
     says the answer may not have arrived; sending it again counts it once.

     Any other refusal is said too, never dropped: a fragment the server wrote for the
     result's place (the exam's access gate, a format error) is shown there; a whole page
     (the sign-in page after the session ended, "form expired", "not found", "too large")
     never goes into a result box and becomes a notice that says whether the answer was
     stored. A pending result's poll is treated alike, except that its answer is stored
     already: a busy or silent server is asked again a few times, then the notice says to
     reload the page for the grade (the poll's `load` trigger fires only once). */
  var MAX_ANSWER_RESENDS = 5;
  var MAX_POLL_RETRIES = 5;
  var LONGEST_RESEND_WAIT_S = 30;
  var LOGIN_PATH = /\/login\/$/;

  var ANSWER_REFUSALS = {
    403: "This page is out of date (its form has expired): your answer was not stored. " +
      "Reload the page, then send it again.",
    404: "This exercise is no longer open to you: your answer was not stored.",
    413: "Your answer is too large to send: it was not stored. Shorten it, then send it again.",
  };
  var ANSWER_REFUSED = "The server did not take your answer: it was not stored. " +
    "Reload the page, then send it again.";
  var ANSWER_REPLY_UNREADABLE = "The server's reply could not be shown: your answer may not have been " +
    "stored. Reload the page to see whether it was.";
  var POLL_REFUSALS = {
    403: "This page is out of date: your answer is stored. Reload the page to see its grade.",
    404: "This exercise is no longer open to you: your answer is stored. Reload the page to see its grade.",
  };
  var POLL_REFUSED = "The server did not send the grade: your answer is stored. Reload the page to see its grade.";
  var POLL_BUSY = "The server is still busy: your answer is stored. Reload the page in a moment to see its grade.";
  var POLL_NO_REPLY = "No reply from the server: your answer is stored. " +
    "Reload the page in a moment to see its grade.";

  function newAnswerKey() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
  }

  function renewAnswerKey(form) {
    var field = form.querySelector("input[name=submission_key]");
    if (field) field.value = newAnswerKey();
    form.dataset.resends = "0";
  }

  /* A resend waiting for its Retry-After is called off when the student changes the
     answer (the refused one was never stored: the page says so, and this one waits for
     its own Send) or sends one themselves; it would send whatever the form holds by then,
     and a finished part's disabled fields would send no answer at all. */
  function cancelPendingResend(form) {
    if (!form.aqResendTimer) return false;
    clearTimeout(form.aqResendTimer);
    form.aqResendTimer = null;
    return true;
  }

  function answerEdited(form) {
    renewAnswerKey(form);
    setFormNote(form, "[data-same-answer]", "");
    syncDraft(form);
    if (cancelPendingResend(form)) {
      showAnswerNotice(form, "You changed the answer before it was sent again: the earlier one was not " +
        "stored. Send this one when it is ready.");
    }
  }

  function enhanceAnswerForm(form) {
    if (form.dataset.keyed === "1") return;
    form.dataset.keyed = "1";
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "submission_key";
    form.appendChild(field);
    renewAnswerKey(form);
    form.addEventListener("input", function () { answerEdited(form); });
    form.addEventListener("change", function () { answerEdited(form); });
    startDraft(form); // what the page restored counts as sent; a draft of this tab comes back
  }

  function isAnswerForm(element) {
    return Boolean(element && element.matches && element.matches("form.answer-form"));
  }

  function isResultPoll(element) {
    return Boolean(element && element.matches && element.matches("[data-result=pending][hx-get]"));
  }

  /* A notice for a result's place. ``parts`` is a text, or a list of texts and links
     ({text, href}); a link opens a new tab, so the answer typed on this page stays. */
  function noticeElement(parts, className, role) {
    var notice = document.createElement("p");
    notice.className = className;
    notice.setAttribute("role", role);
    notice.setAttribute("data-answer-notice", "");
    [].concat(parts).forEach(function (part) {
      if (typeof part === "string") {
        notice.appendChild(document.createTextNode(part));
        return;
      }
      var link = document.createElement("a");
      link.href = part.href;
      link.target = "_blank";
      link.rel = "noopener";
      link.textContent = part.text;
      notice.appendChild(link);
    });
    return notice;
  }

  /* The answer is on its way again (or may be): said politely, styled as pending. */
  function showAnswerNotice(form, text) {
    var target = document.querySelector(form.getAttribute("hx-target") || "");
    if (!target) return;
    target.replaceChildren(noticeElement(text, "pending aq-answer-notice", "status"));
  }

  /* The server refused the answer: said at once, and focus moves there as to a grade. */
  function showAnswerRefusal(form, parts) {
    var target = document.querySelector(form.getAttribute("hx-target") || "");
    if (!target) return;
    var notice = noticeElement(parts, "invalid aq-answer-notice", "alert");
    target.replaceChildren(notice);
    focusFeedback(form, notice);
  }

  /* A pending result that will not get its grade on this page: the notice takes its place. */
  function showPollNotice(poll, parts) {
    if (!poll.isConnected) return;
    poll.replaceWith(noticeElement(parts, "aq-answer-notice is-stored", "alert"));
  }

  function retryAfterSeconds(xhr) {
    var seconds = Number(xhr.getResponseHeader("Retry-After"));
    if (!isFinite(seconds) || seconds < 1) seconds = 2;
    return Math.min(seconds, LONGEST_RESEND_WAIT_S);
  }

  /* The login path the request was sent to, when the session had ended (the XHR
     followed the redirect, so the reply is the sign-in page with a 200); else null. */
  function signInPath(xhr) {
    try {
      var path = new URL(xhr.responseURL, window.location.href).pathname;
      return xhr.responseURL && LOGIN_PATH.test(path) ? path : null;
    } catch (error) {
      return null;
    }
  }

  /* A fragment made for the result's place; the product's pages all carry <html>. */
  function isFragment(body) {
    return typeof body === "string" && body.trim() !== "" && !/<html[\s>]/i.test(body) &&
      !/^\s*<!doctype/i.test(body);
  }

  function signedOutNotice(loginPath, poll) {
    var back = window.location.pathname + window.location.search;
    var link = { text: "Sign in again in a new tab", href: loginPath + "?next=" + encodeURIComponent(back) };
    return poll ?
      ["You are signed out: your answer is stored. ", link, ", then reload this page to see its grade."] :
      ["You are signed out: your answer was not stored. ", link, ", then send it again."];
  }

  function refusalNotice(status, poll) {
    if (status < 400) return poll ? POLL_REFUSED : ANSWER_REPLY_UNREADABLE;
    if (poll) return POLL_REFUSALS[status] || POLL_REFUSED;
    return ANSWER_REFUSALS[status] || ANSWER_REFUSED;
  }

  /* htmx:beforeSwap of an answer's reply or a pending result's poll. */
  function resultReplyArrived(event) {
    var detail = event.detail;
    var source = detail.requestConfig && detail.requestConfig.elt;
    var poll = isResultPoll(source);
    if (!poll && !isAnswerForm(source)) return;
    var xhr = detail.xhr;
    var status = xhr.status;
    if (status === 204 || status === 429 || status >= 500) return; // see answerReplied, pollReplied
    var loginPath = signInPath(xhr);
    var parts;
    if (loginPath) {
      parts = signedOutNotice(loginPath, poll);
    } else if (isFragment(detail.serverResponse)) {
      if (status < 400) return;
      detail.shouldSwap = true; // a refusal written for this place: shown as it is
      detail.isError = false;
      return;
    } else {
      parts = refusalNotice(status, poll);
    }
    detail.shouldSwap = false;
    if (poll) showPollNotice(source, parts);
    else showAnswerRefusal(source, parts);
  }

  function answerReplied(event) {
    var form = event.detail.elt;
    if (!isAnswerForm(form)) return;
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status === 503 || status === 429) {
      var resends = Number(form.dataset.resends || "0");
      if (resends >= MAX_ANSWER_RESENDS) {
        showAnswerNotice(form, "The server is still busy: your answer was not stored. Send it again in a moment.");
        return;
      }
      var wait = retryAfterSeconds(event.detail.xhr);
      form.dataset.resends = String(resends + 1);
      showAnswerNotice(form, (status === 503 ? "The server is busy" : "That was sent too soon") +
        ": your answer was not stored yet. It is sent again in " + wait + " s.");
      cancelPendingResend(form);
      form.aqResendTimer = setTimeout(function () {
        form.aqResendTimer = null;
        if (!form.isConnected || form.classList.contains("is-expired") || form.classList.contains("is-finished")) {
          return;
        }
        form.requestSubmit();
      }, wait * 1000);
    } else if (status === 0 || status >= 500) {
      showAnswerNotice(form, "No reply from the server: your answer may not have arrived. " +
        "Send it again; if it did arrive, it counts once.");
    } else {
      renewAnswerKey(form); // the server judged this answer: the next one is a new answer
    }
  }

  /* A poll that got a busy server (after its Retry-After) or no reply (after 1, 2, 4 …
     s) is sent again by the same element, so its reply is handled as the first one was. */
  function pollReplied(event) {
    var poll = event.detail.elt;
    if (!isResultPoll(poll) || !poll.isConnected) return; // swapped: the reply was shown
    var xhr = event.detail.xhr;
    var status = xhr ? xhr.status : 0;
    var busy = status === 503 || status === 429;
    if (!busy && status !== 0 && status < 500) return;
    var retries = Number(poll.dataset.pollRetries || "0");
    if (retries >= MAX_POLL_RETRIES) {
      showPollNotice(poll, busy ? POLL_BUSY : POLL_NO_REPLY);
      return;
    }
    poll.dataset.pollRetries = String(retries + 1);
    var wait = busy ? retryAfterSeconds(xhr) : Math.min(Math.pow(2, retries), LONGEST_RESEND_WAIT_S);
    setTimeout(function () {
      if (!poll.isConnected) return;
      var request = window.htmx.ajax("GET", poll.getAttribute("hx-get"), {
        source: poll, target: poll, swap: "outerHTML",
      });
      // A lost reply rejects the promise; htmx:afterRequest has dealt with it already.
      if (request && request.catch) request.catch(function () {});
    }, wait * 1000);
  }

  /* After "You are signed out" the student signs in in another tab and sends the answer
     again from this page: with the page's token it would be refused as an expired form. */
  function answerSending(event) {
    if (!isAnswerForm(event.detail.elt)) return;
    cancelPendingResend(event.detail.elt); // this request is the answer: none waits behind it
    var fresh = cookieCsrfToken();
    if (fresh) event.detail.parameters.csrfmiddlewaretoken = fresh;
  }

  document.addEventListener("htmx:configRequest", answerSending);
  document.addEventListener("htmx:beforeSwap", resultReplyArrived);
  document.addEventListener("htmx:afterRequest", answerReplied);
  document.addEventListener("htmx:afterRequest", pollReplied);

  // ------------------------------------------------------- time limits

  function clockText(seconds) {
    var hours = Math.floor(seconds / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var secs = seconds % 60;
    var mm = hours ? String(minutes).padStart(2, "0") : String(minutes);
    return (hours ? hours + ":" : "") + mm + ":" + String(secs).padStart(2, "0");
  }

  /* "about 32 minutes", rounded up as the server rounds it (exams.window.clock_view). */
  function minutesText(seconds) {
    var minutes = Math.ceil(seconds / 60);
    return minutes + (minutes === 1 ? " minute" : " minutes");
  }

  function expireAnswerForms(className) {
    document.querySelectorAll("form.answer-form").forEach(function (form) {
      form.querySelectorAll("input, textarea, button, select").forEach(function (control) {
        if (control.name !== "csrfmiddlewaretoken") control.disabled = true;
      });
      cancelPendingResend(form);
      form.classList.add(className || "is-expired");
    });
  }

  /* Count down the seconds the server said are left. The end is taken from this page's
     own clock at load, so a wrong clock on the student's machine does not matter; the
     server refuses late answers regardless. */
  function startCountdown(clock) {
    if (clock.dataset.enhanced === "1") return;
    clock.dataset.enhanced = "1";
    var endsAt = Date.now() + Number(clock.dataset.secondsLeft) * 1000;
    var text = clock.querySelector("[data-countdown-text]");
    var minutes = clock.querySelector("[data-countdown-minutes]");
    var warnUnsent = unsentWarning(clock);
    var timer = null;
    var askDeadline = null;
    function tick() {
      var left = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
      if (text) text.textContent = clockText(left);
      if (minutes) minutes.textContent = minutesText(left);
      warnUnsent(left);
      if (left > 0) return;
      clearInterval(timer);
      timer = null;
      // At zero, ask once more: an extension given since the last poll reloads the page.
      if (askDeadline && clock.dataset.expired !== "1") setTimeout(askDeadline, 0);
      clock.classList.add("is-up");
      clock.dataset.expired = "1";
      var alert = clock.querySelector("[data-countdown-alert]");
      if (alert) alert.textContent = "Your time for this assignment is up; answers are no longer accepted.";
      // Each unsent answer is kept (read before its controls are disabled) and listed; none
      // is sent: the server refuses answers after the deadline, and the student chose none.
      document.querySelectorAll("form.answer-form").forEach(syncDraft);
      expireAnswerForms();
      var drafts = document.querySelector("[data-unsent-drafts]");
      if (drafts) {
        drafts.dataset.closedBy = "time";
        refreshUnsentDrafts();
      }
    }
    timer = setInterval(tick, 1000);
    tick();
    if (clock.dataset.deadlineUrl) askDeadline = pollDeadline(clock, function (secondsLeft) {
      endsAt = Date.now() + secondsLeft * 1000;
      tick();
    }, function (message) {
      clearInterval(timer);
      timer = null;
      takenOver(clock, message);
    });
  }

  /* Another browser session took this attempt over (one-session exams): the page says so
     where the clock's alerts go and disables its answer forms, without reloading into the
     gate's error page; the answers typed here stay readable to copy. */
  function takenOver(clock, message) {
    clock.classList.add("is-taken-over");
    clock.dataset.takenOver = "1";
    var alert = clock.querySelector("[data-countdown-alert]");
    if (alert) alert.textContent = message || "Your attempt was taken over by another browser session.";
    expireAnswerForms("is-taken-over");
  }

  function deadlineRetryAfterSeconds(response) {
    var seconds = Number(response.headers.get("Retry-After"));
    if (!isFinite(seconds) || seconds < 1) seconds = 2;
    return Math.min(seconds, 300);
  }

  /* Ask the server for the student's own deadline every data-deadline-poll-seconds (plus up
     to a fifth, so the pages of a class that opened together spread out), when the page's
     own clock reaches zero, and when the tab is shown again, so an extension, an
     accommodation edited or an early close reaches an open page without a reload. A page
     whose clock already ran out, or whose attempt ended meanwhile, reloads instead: the
     server draws the forms and the attempt's state. So does a page whose course was archived
     ({"archived": true}: it reloads read-only, without a clock). A 404 {"not_started": true}
     (the attempt was removed by staff) stops the polls and reloads once, to the Start button;
     a page reloaded for it that gets another 404 before any answered poll only stops. A 403
     {"taken_over": true, message} (another browser session has the attempt now) stops the
     polls and calls onTakenOver. A 429 (asked too often: many tabs, a flurry of tab
     switches) shows the student nothing: the page asks again after the reply's Retry-After
     seconds. */
  function pollDeadline(clock, moveTo, onTakenOver) {
    var url = clock.dataset.deadlineUrl;
    var everyMs = Math.max(1, Number(clock.dataset.deadlinePollSeconds) || 30) * 1000;
    var deadlineText = clock.querySelector("[data-countdown-deadline]");
    var limitText = clock.querySelector("[data-countdown-limit]");
    var polls = 0;
    var stopped = false;
    var timer = null;
    var lastAsked = Date.now();
    var reloadedKey = "attnquiz.deadline-404:" + url;
    function stop() { stopped = true; clearTimeout(timer); }
    // The one reload a 404 may cause: remembered in this tab until a poll is answered, so
    // a server that still draws the clock without an attempt cannot reload it every poll.
    function reloadOnceForNoAttempt() {
      var storage = draftStorage();
      try {
        if (storage && storage.getItem(reloadedKey)) return;
        if (storage) storage.setItem(reloadedKey, "1");
      } catch (error) { /* storage refused: reload anyway */ }
      reloadPage();
    }
    function forgetReloadForNoAttempt() {
      var storage = draftStorage();
      try {
        if (storage) storage.removeItem(reloadedKey);
      } catch (error) { /* nothing to do */ }
    }
    function scheduleNext() {
      askAfter(everyMs);
    }
    function askAfter(ms) {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(ask, ms * (1 + Math.random() / 5));
    }
    function ask() {
      if (stopped) return;
      polls += 1;
      if (polls > 5000) { stop(); return; } // a bound on a tab left open for days
      lastAsked = Date.now();
      scheduleNext();
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (response.ok) return response.json();
          if (response.status === 429) {
            // In place of the next regular ask, not besides it.
            askAfter(deadlineRetryAfterSeconds(response) * 1000);
            return null;
          }
          if (response.status === 403 || response.status === 404) {
            return response.json().catch(function () { return null; });
          }
          return null;
        })
        .then(function (data) {
          if (!data || stopped) return;
          if (data.taken_over) {
            stop();
            onTakenOver(String(data.message || ""));
            return;
          }
          if (data.not_started) {
            stop();
            reloadOnceForNoAttempt();
            return;
          }
          if (data.seconds_left === undefined) return; // another refusal: the next poll asks again
          forgetReloadForNoAttempt();
          if (data.archived) {
            stop();
            reloadPage();
            return;
          }
          if (data.ended || data.seconds_left === null) {
            stop();
            reloadPage();
            return;
          }
          if (clock.dataset.expired === "1") {
            if (data.seconds_left > 0) { stop(); reloadPage(); }
            return;
          }
          // Every text tied to the deadline at once: the end, the limit (an extension
          // lengthens it), then the time and minutes left (moveTo ticks).
          if (deadlineText && data.deadline_text) deadlineText.textContent = data.deadline_text;
          if (limitText && data.limit_text) limitText.textContent = "Time limit: " + data.limit_text + ".";
          clock.dataset.deadline = data.deadline || "";
          moveTo(Number(data.seconds_left));
        })
        .catch(function () { /* offline for a moment: the next poll tries again */ });
    }
    scheduleNext();
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible" && Date.now() - lastAsked > everyMs / 3) ask();
    });
    return ask;
  }

  // ------------------------------------------------------------- wiring

  function enhance(root) {
    var scope = root || document;
    scope.querySelectorAll(".matrix-grid[data-rows][data-cols]").forEach(enhanceGrid);
    scope.querySelectorAll("input[data-preview]").forEach(enhanceSymbolicInput);
    scope.querySelectorAll("textarea[data-step-preview]").forEach(enhanceDerivationInput);
    scope.querySelectorAll("input[data-d-k-slider]").forEach(enhanceDkSlider);
    scope.querySelectorAll("[data-countdown][data-seconds-left]").forEach(startCountdown);
    if (scope.matches && scope.matches("form.answer-form")) enhanceAnswerForm(scope);
    scope.querySelectorAll("form.answer-form").forEach(enhanceAnswerForm);
    if (scope.matches && scope.matches("[data-result]")) applyResult(scope);
    scope.querySelectorAll("[data-result]").forEach(applyResult);
    if (scope.querySelector && scope.querySelector("[data-unsent-drafts]")) {
      dropDraftsOfClosedParts();
      refreshUnsentDrafts();
    }
    renderMath(root && root.nodeType === 1 ? root : document.body);
    typesetTexElements(root && root.nodeType === 1 ? root : document.body);
    updateScrollBoxes(document);
  }

  /* A form that does something hard to take back (archive a course, drop a student,
     remove an exercise) names it in data-confirm: the browser asks before sending it. */
  function confirmBeforeSending(event) {
    var form = event.target;
    if (!form || !form.dataset || !form.dataset.confirm) return;
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  }

  document.addEventListener("submit", confirmBeforeSending, true);

  function configureHtmx() {
    if (!window.htmx) return;
    // A 422 carries "this answer could not be read" and must be shown, not dropped.
    window.htmx.config.responseHandling = [
      { code: "204", swap: false },
      { code: "[23]..", swap: true },
      { code: "422", swap: true, error: false },
      { code: "400", swap: true, error: false },
      { code: "[45]..", swap: false, error: true },
    ];
    window.htmx.onLoad(function (element) {
      enhance(element);
    });
  }

  window.attnquiz = {
    parseMatrixText: parseMatrixText,
    answerFromFields: answerFromFields,
    answerKey: answerKey,
    unsentSentence: unsentSentence,
    minutesText: minutesText,
    asciiFromMathfield: asciiFromMathfield,
    latexFromAnswerText: latexFromAnswerText,
    sameAnswerText: sameAnswerText,
    splitDerivationSteps: splitDerivationSteps,
    renderMath: renderMath,
    enhance: enhance,
  };

  function start() {
    removeDraftsOfOthers();
    configureHtmx();
    enhance(document); // idempotent: htmx's own load event may enhance the body again
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
