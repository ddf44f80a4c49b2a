import sys, time, json, statistics
from slack_sdk.socket_mode.builtin.client import SocketModeClient
from slack_bolt.adapter.socket_mode.builtin import SocketModeHandler
recv = {}; handled = {}; sent = {}
orig_on = SocketModeClient._on_message
def _on_message(self, message):
    try: recv[json.loads(message).get("envelope_id")] = time.monotonic()
    except Exception: pass
    return orig_on(self, message)
SocketModeClient._on_message = _on_message
orig_handle = SocketModeHandler.handle
def handle(self, client, req):
    handled[req.envelope_id] = time.monotonic()
    r = orig_handle(self, client, req)
    sent[req.envelope_id] = time.monotonic()
    return r
SocketModeHandler.handle = handle
exec(open("exp_tmp.py").read().replace('        live.stack.slack.pool.stop_accepting()', '''        import tests.fake_slack as fs
        q = [ (recv[e]-fake._socket.envelopes[e].sent_at)*1000 for e in envs]
        h = [ (handled[e]-recv[e])*1000 for e in envs]
        d = [ (sent[e]-handled[e])*1000 for e in envs]
        a = [ (fake._socket.envelopes[e].acked_at-sent[e])*1000 for e in envs]
        for name, v in (("fake->recv", q), ("recv->handle start", h), ("dispatch", d), ("sent->fake acked", a)):
            print(name, "p50 %.1f p99 %.1f" % (percentile(v,50), percentile(v,99)))
        live.stack.slack.pool.stop_accepting()'''))
