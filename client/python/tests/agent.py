"""One agent process of the tests: enters an effect through the sidecar and acts as told.

usage: agent.py MODE DESTINATION CONTENT TASK LEDGER [WAIT]
  deliver   cross, append a line to LEDGER, report sent_verified
  not_sent  cross, report not_sent with evidence (nothing appended)
  hang      cross, append "armed" to LEDGER, then sleep until killed
  raise     cross, append a line, then raise inside the crossing
Prints one JSON line: the decision (and the outcome answer) as this agent saw it.
"""
import json
import sys
import time

import oncegate


def main():
    mode, destination, content, task, ledger = sys.argv[1:6]
    wait = float(sys.argv[6]) if len(sys.argv) > 6 else 0
    gate = oncegate.Gate()
    out = {"task": task}
    try:
        with gate.effect(destination=destination, content=content.encode("utf-8"), task=task, wait=wait) as effect:
            out["decision"] = effect.decision.kind
            out["reason"] = effect.decision.reason
            if effect.decision.proceed:
                effect.checkpoint("before-send")
                with effect.crossing() as crossing:
                    out["idempotency_key"] = crossing.idempotency_key
                    if mode == "not_sent":
                        out["outcome"] = crossing.not_sent(evidence="provider refused: 550 mailbox unavailable")
                    elif mode == "hang":
                        with open(ledger, "a") as f:
                            f.write("armed %s\n" % task)
                        print(json.dumps(out), flush=True)
                        time.sleep(3600)
                    else:
                        with open(ledger, "a") as f:
                            f.write("delivered %s %s\n" % (task, crossing.idempotency_key))
                        if mode == "raise":
                            raise RuntimeError("provider connection reset after the request was sent")
                        out["outcome"] = crossing.sent_verified(evidence="msg-" + task)
    except oncegate.Stopped as e:
        out["stopped"] = e.decision.kind
    except oncegate.Unavailable as e:
        out["unavailable"] = str(e)
    except RuntimeError as e:
        out["raised"] = str(e)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
