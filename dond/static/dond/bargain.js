// Chat and secret proposal of the dond Bargain page. Every text from the server or a player is inserted with
// textContent, never as HTML. The server's state payload is the truth; this script only renders it, checks input
// before it is sent (the server checks it again) and shows the countdown only in the last minutes.
(function () {
  var T = js_vars.text;
  var view = js_vars.view;
  var chat = document.getElementById('dond-chat');
  var input = document.getElementById('dond-input');
  var sendButton = document.getElementById('dond-send');
  var proposeButton = document.getElementById('dond-propose');
  var chars = document.getElementById('dond-chars');
  var preview = document.getElementById('dond-preview');
  var confirmBox = document.getElementById('dond-confirm');
  var typingBubble = null;
  var busy = false;
  var unconfirmedText = null;  // the message sent, until the server stores it: a refusal puts it back
  var mineBeforeSending = 0;  // the person's messages in the chat when it was sent
  // The unsent message survives a reload (global/drafts.js, this tab only, per participant and game); it is dropped
  // once the server has stored the message, and a refused message stays in the draft as it was typed.
  var draft = LabDrafts.keep(document.getElementById('dond-compose'),
                             {key: js_vars.draft_key, prefix: js_vars.draft_prefix, session: true});

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (whole, key) { return key in values ? values[key] : whole; });
  }

  sendButton.textContent = T.send;
  proposeButton.textContent = T.propose;
  input.placeholder = T.placeholder;  // no maxLength: a paste over the limit is kept whole and the counter says so

  var fields = document.getElementById('dond-proposal-fields');
  js_vars.items.forEach(function (item) {
    var row = document.createElement('div');
    row.className = 'd-flex align-items-center gap-2 mb-1';
    var box = document.createElement('input');
    box.type = 'number'; box.min = 0; box.max = item.count; box.step = 1; box.value = 0; box.inputMode = 'numeric';
    box.className = 'form-control form-control-sm'; box.dataset.item = item.id; box.id = 'take-' + item.id;
    var label = document.createElement('label');
    label.htmlFor = box.id;
    label.textContent = item.word + ' (0–' + item.count + ')';
    row.appendChild(box); row.appendChild(label);
    fields.appendChild(row);
  });
  var boxes = Array.prototype.slice.call(fields.querySelectorAll('input'));

  // The proposal as typed: {counts, points, errors} (each count a whole number from 0 to what is available).
  function readProposal() {
    var counts = {}, points = 0, errors = [], taken = [];
    js_vars.items.forEach(function (item, index) {
      var box = boxes[index];
      var raw = box.value.trim();
      var ok = /^[0-9]+$/.test(raw) && Number(raw) <= item.count;
      box.setAttribute('aria-invalid', ok ? 'false' : 'true');
      if (!ok) { errors.push(fill(T.error_count, {item: item.word, count: item.count})); return; }
      var n = Number(raw);
      counts[item.id] = n;
      points += n * item.own_points;
      if (n) { taken.push(n + ' ' + (n === 1 ? item.one : item.word)); }
    });
    return {counts: counts, points: points, errors: errors, taken: taken.join(', ') || T.notice_nothing};
  }

  function updatePreview() {
    var proposal = readProposal();
    preview.classList.toggle('invalid', proposal.errors.length > 0);
    preview.textContent = proposal.errors.length ? proposal.errors.join(' ') : fill(T.preview, {points: proposal.points});
    return proposal;
  }
  boxes.forEach(function (box) { box.addEventListener('input', function () { hideConfirm(); updatePreview(); }); });

  // The message counter: visible from the start, an error (not a cut) once the text is over the limit.
  function overBy() { return input.value.length - js_vars.max_chars; }
  function updateCounter() {
    var over = overBy();
    chars.classList.toggle('over', over > 0);
    chars.textContent = over > 0 ? fill(T.error_too_long_typed, {over: over, max: js_vars.max_chars})
                                 : fill(T.chars, {n: input.value.length, max: js_vars.max_chars});
    input.setAttribute('aria-invalid', over > 0 ? 'true' : 'false');
  }
  input.addEventListener('input', updateCounter);

  function bubble(who, text, extraClass) {
    var div = document.createElement('div');
    div.className = 'dond-msg ' + who + (extraClass ? ' ' + extraClass : '');
    if (who !== 'system') {
      var name = document.createElement('span');
      name.className = 'dond-who';
      name.textContent = who === 'me' ? T.you : T.other;
      div.appendChild(name);
    }
    var body = document.createElement('span');
    body.className = 'dond-text';
    if (who !== 'system') { body.dataset.ownText = ''; }  // typed by a person or written by the model: not ours
    body.textContent = text;
    div.appendChild(body);
    return div;
  }

  function show(id, visible) { document.getElementById(id).style.display = visible ? '' : 'none'; }
  function setStatus(text) { document.getElementById('dond-status').textContent = text || ''; }
  function setError(text) { document.getElementById('dond-error').textContent = text || ''; }

  // The other player (an LLM) is working on its move: a bubble with pulsing dots (and the words "... is writing" for a
  // screen reader) that its streamed reply fills.
  function showTyping() {
    typingBubble = bubble('other', '', 'typing');
    var dots = document.createElement('span');
    dots.className = 'dond-dots';
    dots.setAttribute('aria-hidden', 'true');
    dots.innerHTML = '<span></span><span></span><span></span>';
    var said = document.createElement('span');
    said.className = 'visually-hidden';
    said.textContent = T.typing;
    typingBubble.appendChild(dots);
    typingBubble.appendChild(said);
    chat.appendChild(typingBubble);
  }

  // Each new message of the other side is said once by the live region #dond-announce (the chat itself is redrawn).
  var announce = document.getElementById('dond-announce');
  var heard = null;
  function announceNew(items) {
    if (heard !== null) {
      items.slice(heard).forEach(function (item) {
        if (item.who === 'me') { return; }
        var line = document.createElement('p');
        var said = document.createElement('span');
        if (item.who === 'other') {  // the other's words, as in their bubble: theirs, not the page's
          line.textContent = T.other + ': ';
          said.dataset.ownText = '';
        }
        said.textContent = item.text;
        line.appendChild(said);
        announce.appendChild(line);
      });
    }
    heard = items.length;
  }

  function render(state) {
    view = state;
    chat.textContent = '';
    typingBubble = null;
    state.chat.forEach(function (item) { chat.appendChild(bubble(item.who, item.text)); });
    announceNew(state.chat);
    if (state.typing) { showTyping(); }
    chat.scrollTop = chat.scrollHeight;
    if (!state.can_propose) { hideConfirm(); }
    var composing = state.can_message && !busy;
    show('dond-compose', !state.finished && !state.must_propose);
    input.disabled = sendButton.disabled = !composing;
    // The proposal form stays where it is while the other side writes (disabled), so the page does not jump; it goes
    // once the person has proposed or the game is over.
    var proposed = state.chat.some(function (item) { return item.notice === 'you_proposed'; });
    show('dond-proposal', !state.finished && (state.can_propose || !proposed));
    document.getElementById('dond-proposal').classList.toggle('dond-waiting', !state.can_propose);
    boxes.forEach(function (box) { box.disabled = !state.can_propose; });
    proposeButton.disabled = busy || !state.can_propose;
    document.getElementById('dond-left').textContent = fill(T.messages_left, {n: state.messages_left});
    updateCounter();
    if (state.finished) {
      setStatus('');
      show('dond-finished', true);
      setTimeout(function () { document.getElementById('dond-next').click(); }, 2500);
    } else if (state.must_propose && state.can_propose) {
      setStatus(T.must_propose);  // one who owes a proposal but is not asked yet (the opener is first) waits
    } else if (state.typing) {
      setStatus(T.typing);
    } else if (state.can_message) {
      setStatus(T.your_turn);
    } else {
      setStatus(T.waiting);
    }
  }

  window.liveRecv = function (data) {
    if (!data) { return; }
    if (data.type === 'state') {
      // Only a state that holds the sent message confirms it: the answer to an earlier request (the page's load, on a
      // slow server) may arrive after the person sent it, and must not drop what a refusal would put back.
      if (unconfirmedText === null || mine(data.chat) > mineBeforeSending) {
        if (unconfirmedText !== null) { draft.clear(); }  // the message is stored: its draft goes
        busy = false;
        unconfirmedText = null;
      }
      render(data);
    } else if (data.type === 'delta') {
      if (!typingBubble) { showTyping(); }
      typingBubble.querySelector('.dond-text').textContent += data.text;
      chat.scrollTop = chat.scrollHeight;
    } else if (data.type === 'rejected') {
      busy = false;
      setError(data.message);
      render(view);
      if (unconfirmedText !== null && !input.value) { input.value = unconfirmedText; }
      unconfirmedText = null;
    }
  };

  function mine(items) { return items.filter(function (item) { return item.who === 'me'; }).length; }

  function sendMessage() {
    var text = input.value;
    if (busy) { return; }
    if (!text.trim()) { setError(T.error_empty_message); input.focus(); return; }
    if (overBy() > 0) {
      setError(fill(T.error_too_long_typed, {over: overBy(), max: js_vars.max_chars}));
      input.focus();
      return;
    }
    busy = true; setError('');
    input.disabled = sendButton.disabled = true;
    unconfirmedText = text;
    mineBeforeSending = mine(view.chat);
    liveSend({type: 'message', text: text});
    input.value = '';
    updateCounter();
  }
  sendButton.addEventListener('click', sendMessage);
  input.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey) { event.preventDefault(); sendMessage(); }
  });

  // A proposal is checked first, then confirmed in the page with its summary (never a browser dialog).
  var pending = null;
  function hideConfirm() { confirmBox.hidden = true; pending = null; proposeButton.hidden = false; }
  proposeButton.addEventListener('click', function () {
    if (busy) { return; }
    var proposal = updatePreview();
    if (proposal.errors.length) { setError(proposal.errors.join(' ')); return; }
    setError('');
    pending = proposal;
    document.getElementById('dond-confirm-text').textContent =
      fill(T.confirm_summary, {items: proposal.taken, points: proposal.points});
    confirmBox.hidden = false;
    proposeButton.hidden = true;
    document.getElementById('dond-confirm-yes').focus();
  });
  document.getElementById('dond-confirm-no').addEventListener('click', function () {
    hideConfirm();
    boxes[0].focus();
  });
  document.getElementById('dond-confirm-yes').addEventListener('click', function () {
    if (busy || !pending) { return; }
    var counts = pending.counts;
    hideConfirm();
    busy = true; setError('');
    proposeButton.disabled = true;
    liveSend({type: 'proposal', counts: counts});
  });

  // oTree's countdown (its own script) is hidden until the last minutes of the page's time limit.
  if (window.jQuery) {
    jQuery(function () {
      jQuery('.otree-timer__time-left').on('update.countdown', function (event) {
        var due = event.offset.totalSeconds <= js_vars.timer_shows_at_s;
        jQuery('.otree-timer').toggleClass('dond-timer-due', due);
      });
    });
  }

  updatePreview();
  render(view);
  liveSend({type: 'load'});
  if (js_vars.opponent === 'human') {
    setInterval(function () { liveSend({type: 'ping'}); }, js_vars.ping_ms);  // views.BARGAIN_PING_S
  }
})();
