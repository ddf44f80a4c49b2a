import sys, time
from nightwatch.adapters.slack.listeners import Listeners
mode = sys.argv[2]
if mode == "noop":
    Listeners.on_mention = lambda self, body, event, context, client: None
elif mode == "dedupe":
    orig = Listeners.on_mention
    def on_mention(self, body, event, context, client):
        self._state.first_delivery(body["event_id"], self._clock.now())
    Listeners.on_mention = on_mention
exec(open("exp_tmp.py").read())
