// check.mjs: the node half of toon-check (see toon-check for usage).
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { decode, encode } from '@toon-format/toon'

const DELIMS = { ',': ',', comma: ',', tab: '\t', '\t': '\t', '|': '|', pipe: '|' }

function usage(msg) {
  console.error(`toon-check: ${msg}`)
  console.error('usage: toon-check [--prefix DIR] [--delimiter comma|tab|pipe] [--indent N] PATH...')
  process.exit(2)
}

function parseArgs(argv) {
  const opts = { delimiter: ',', indent: 2, paths: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--delimiter') {
      opts.delimiter = DELIMS[argv[++i]]
      if (opts.delimiter === undefined) usage(`bad delimiter ${JSON.stringify(argv[i])}`)
    } else if (a === '--indent') {
      opts.indent = Number(argv[++i])
      if (!Number.isInteger(opts.indent) || opts.indent < 1) usage('bad indent')
    } else if (a.startsWith('--')) {
      usage(`unknown option ${a}`)
    } else {
      opts.paths.push(a)
    }
  }
  if (opts.paths.length === 0) usage('no PATH given')
  return opts
}

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      const sub = join(path, name)
      if (statSync(sub).isDirectory() || name.endsWith('.toon')) collect(sub, out)
    }
  } else {
    out.push(path)
  }
}

// Returns null when the file is canonical, else why not.
function checkFile(file, opts) {
  const bytes = readFileSync(file)
  let text
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return 'not valid UTF-8'
  }
  let value
  try {
    value = decode(text, { strict: true, indent: opts.indent })
  } catch (err) {
    return `strict decode failed: ${err.message}`
  }
  const again = encode(value, { delimiter: opts.delimiter, indent: opts.indent })
  if (again === text) return null
  let at = 0
  while (at < text.length && text[at] === again[at]) at++
  return `not canonical at offset ${at}:\n  ours:      ${JSON.stringify(text.slice(at, at + 60))}\n  reference: ${JSON.stringify(again.slice(at, at + 60))}`
}

const opts = parseArgs(process.argv.slice(2))
const files = []
for (const p of opts.paths) collect(p, files)
let passed = 0
let failed = 0
for (const file of files) {
  const why = checkFile(file, opts)
  if (why === null) {
    passed++
  } else {
    failed++
    if (failed <= 20) console.error(`FAIL ${file}: ${why}`)
  }
}
if (failed > 20) console.error(`... and ${failed - 20} more failures`)
if (files.length === 0) {
  console.error('toon-check: no .toon files found')
  process.exit(1)
}
console.log(`toon-check: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
