"""Verify every DKIM signature of a message with Debian's python3-dkim (dkimpy), the
library behind the `dkimverify` command, taking the DNS TXT records from a JSON object
{name: record} instead of the system resolver (the test's DNS zone).

Usage: /usr/bin/python3 dkim-verify.py RECORDS_JSON < message
Prints a JSON list: one {"index", "domain", "selector", "algorithm", "valid"} per signature.
"""
import json
import sys

import dkim

records = json.loads(sys.argv[1])
message = sys.stdin.buffer.read()


def dnsfunc(name, timeout=5):
    key = name.decode() if isinstance(name, bytes) else name
    value = records.get(key.rstrip("."))
    return value.encode() if value is not None else None


d = dkim.DKIM(message)
results = []
for index, (header_name, value) in enumerate(h for h in d.headers if h[0].lower() == b"dkim-signature"):
    tags = dkim.util.parse_tag_value(value)
    try:
        valid = d.verify(idx=index, dnsfunc=dnsfunc)
    except dkim.DKIMException:
        valid = False
    results.append({
        "index": index,
        "domain": tags[b"d"].decode(),
        "selector": tags[b"s"].decode(),
        "algorithm": tags[b"a"].decode(),
        "valid": bool(valid),
    })
print(json.dumps(results))
