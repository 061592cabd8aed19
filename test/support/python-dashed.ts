// FlexibleArgumentParser's pre-pass as vLLM writes it, in Python, for the tests that run python3's
// own argparse beside armproof's reading (test/argparse/resolve.test.ts, test/argparse/switches.test.ts):
// `_` → `-` in a `--` word's name, before its first ".".
export const PY_DASHED = String.raw`
def dashed(a):
    if not a.startswith('--'):
        return a
    name, eq, rest = a.partition('=')
    head, dot, tail = name.partition('.')
    return head.replace('_', '-') + dot + tail + eq + rest
`
