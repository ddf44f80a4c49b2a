import statistics, tempfile, time, sys
from pathlib import Path
from bench.slack_load import slow_model, percentile, mention
from tests import payloads
from tests.e2e.slack_live import live_app
from tests.fake_slack import FakeSlack
kind = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp, FakeSlack() as fake:
    with live_app(Path(tmp)/"home", fake, overrides=(slow_model(1.0),), workers=24) as live:
        fake.send_event(payloads.app_home_opened("U1")); fake.wait_for(lambda: fake.home_view("U1") is not None, 10)
        if kind == "msg":
            envs = [fake.send_event(payloads.message(f"hi {n}", bot_id="B9", ts=f"1795000001.{n:06d}")) for n in range(50)]
        else:
            envs = [mention(fake, n) for n in range(50)]
        for e in envs: fake.ack_for(e)
        lat = [fake.ack_times[e]*1000 for e in envs]
        print(kind, "p50 %.1f p99 %.1f" % (percentile(lat,50), percentile(lat,99)), [round(x) for x in lat[:10]], [round(x) for x in lat[-5:]])
        live.stack.slack.pool.stop_accepting()
        live.stop()
