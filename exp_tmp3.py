import sys
import nightwatch.adapters.slack.app as appmod
appmod.LISTENER_THREADS = int(sys.argv[2]); appmod.SOCKET_THREADS = int(sys.argv[3])
exec(open("exp_tmp.py").read())
