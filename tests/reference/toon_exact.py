"""Decoding TOON documents with the official library, integers exact.

The library reads numbers as doubles, exact only up to 2^53; byte counts
go to 2^64 - 1.  Its number tokens pass through Number.parseFloat, so an
integer token beyond that is handed back as {"__int": digits} instead,
and read as an exact integer by `decode_all`.
"""
import json, subprocess

DECODE = ("import {decode} from '%s/@toon-format/toon/dist/index.mjs';"
          "const pf=Number.parseFloat;Number.parseFloat=t=>/^[0-9]+$/.test(t)&&"
          "!Number.isSafeInteger(pf(t))?{__int:t}:pf(t);"
          "let s='';process.stdin.on('data',d=>s+=d);process.stdin.on('end',()=>"
          "process.stdout.write(JSON.stringify(JSON.parse(s).map(t=>decode(t)))));")


def decode_all(texts, node_modules):
    """The documents `texts`, decoded, with every integer exact."""
    out = subprocess.run(["node", "--input-type=module", "-e", DECODE % node_modules],
                         input=json.dumps(texts).encode(), stdout=subprocess.PIPE, check=True)
    exact = lambda o: int(o["__int"]) if list(o) == ["__int"] else o
    return json.loads(out.stdout, object_hook=exact)
