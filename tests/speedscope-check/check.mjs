// check.mjs: the node half of speedscope-check (see run).  Validates each
// FILE against the file-format schema that the published speedscope
// package ships, with Ajv, and checks what the schema cannot say and
// speedscope's importer relies on: one weight per sample, every frame
// index in range, endValue the sum of the weights.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import Ajv from 'ajv'

const require = createRequire(import.meta.url)
const schemaPath = require.resolve('speedscope/dist/release/file-format-schema.json')
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'))
const validate = new Ajv({ strict: false }).compile(schema)

let failed = 0
for (const file of process.argv.slice(2)) {
  const problems = []
  let doc
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    problems.push(`not JSON: ${e.message}`)
  }
  if (doc !== undefined && !validate(doc))
    problems.push(...validate.errors.map((e) => `schema: ${e.instancePath} ${e.message}`))
  if (doc !== undefined && problems.length === 0) {
    const frames = doc.shared.frames.length
    for (const p of doc.profiles) {
      if (p.type !== 'sampled') continue
      if (p.samples.length !== p.weights.length) problems.push('samples and weights differ in length')
      if (p.samples.some((s) => s.some((f) => !Number.isInteger(f) || f < 0 || f >= frames)))
        problems.push('a frame index out of range')
      const sum = p.weights.reduce((a, b) => a + b, 0)
      if (sum !== p.endValue) problems.push(`endValue ${p.endValue}, weights sum to ${sum}`)
    }
  }
  if (problems.length) {
    failed++
    console.log(`${file}: ${problems.join('; ')}`)
  } else {
    console.log(`ok ${file.replace(/.*\//, '')}`)
  }
}
process.exit(failed ? 1 : 0)
