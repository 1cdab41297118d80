// Chat and secret proposal of the dond Bargain page. Every text from the server or a player is inserted with
// textContent, never as HTML. The server's state payload is the truth; this script only renders it.
(function () {
  var T = js_vars.text;
  var view = js_vars.view;
  var chat = document.getElementById('dond-chat');
  var input = document.getElementById('dond-input');
  var sendButton = document.getElementById('dond-send');
  var proposeButton = document.getElementById('dond-propose');
  var typingBubble = null;
  var busy = false;
  var unconfirmedText = null;  // the message sent, until the server stores it: a refusal puts it back
  var mineBeforeSending = 0;  // the person's messages in the chat when it was sent

  sendButton.textContent = T.send;
  proposeButton.textContent = T.propose;
  input.placeholder = T.placeholder;
  input.maxLength = js_vars.max_chars;

  var fields = document.getElementById('dond-proposal-fields');
  js_vars.items.forEach(function (item) {
    var row = document.createElement('div');
    row.className = 'd-flex align-items-center gap-2 mb-1';
    var box = document.createElement('input');
    box.type = 'number'; box.min = 0; box.max = item.count; box.step = 1; box.value = 0;
    box.className = 'form-control form-control-sm'; box.dataset.item = item.id; box.id = 'take-' + item.id;
    var label = document.createElement('label');
    label.htmlFor = box.id;
    label.textContent = item.word + ' (0–' + item.count + ')';
    row.appendChild(box); row.appendChild(label);
    fields.appendChild(row);
  });

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
    body.textContent = text;
    div.appendChild(body);
    return div;
  }

  function show(id, visible) { document.getElementById(id).style.display = visible ? '' : 'none'; }
  function setStatus(text) { document.getElementById('dond-status').textContent = text || ''; }
  function setError(text) { document.getElementById('dond-error').textContent = text || ''; }

  // The other player (an LLM) is working on its move: a bubble that its streamed reply fills.
  function showTyping() {
    typingBubble = bubble('other', '', 'typing');
    chat.appendChild(typingBubble);
  }

  function render(state) {
    view = state;
    chat.textContent = '';
    typingBubble = null;
    state.chat.forEach(function (item) { chat.appendChild(bubble(item.who, item.text)); });
    if (state.typing) { showTyping(); }
    chat.scrollTop = chat.scrollHeight;
    var composing = state.can_message && !busy;
    show('dond-compose', !state.finished && !state.must_propose);
    input.disabled = sendButton.disabled = !composing;
    show('dond-proposal', state.can_propose);
    proposeButton.disabled = busy;
    document.getElementById('dond-left').textContent = T.messages_left.replace('{n}', state.messages_left);
    if (state.finished) {
      setStatus('');
      show('dond-finished', true);
      setTimeout(function () { document.getElementById('dond-next').click(); }, 2500);
    } else if (state.must_propose) {
      setStatus(T.must_propose);
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
    if (!text.trim() || busy) { return; }
    busy = true; setError('');
    input.disabled = sendButton.disabled = true;
    unconfirmedText = text;
    mineBeforeSending = mine(view.chat);
    liveSend({type: 'message', text: text});
    input.value = '';
  }
  sendButton.addEventListener('click', sendMessage);
  input.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey) { event.preventDefault(); sendMessage(); }
  });
  proposeButton.addEventListener('click', function () {
    var counts = {};
    fields.querySelectorAll('input').forEach(function (box) { counts[box.dataset.item] = box.value; });
    if (busy || !window.confirm(T.confirm_proposal)) { return; }
    busy = true; setError('');
    proposeButton.disabled = true;
    liveSend({type: 'proposal', counts: counts});
  });

  render(view);
  liveSend({type: 'load'});
  if (js_vars.opponent === 'human') {
    setInterval(function () { liveSend({type: 'ping'}); }, 5000);
  }
})();
