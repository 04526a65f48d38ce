import { describe, expect, it } from 'vitest'
import { atomicActionCatalogue } from '../../shared/models/action-catalogue.ts'

// atomic/action/list (spec 4.10) lists every node parameter of the manifest schema with its
// description; a parameter added to the schema without one made the route answer 500.
describe('the atomic action catalogue', () => {
  it('describes every parameter of every node the manifest schema has', () => {
    const catalogue = atomicActionCatalogue()
    expect(catalogue.length).toBeGreaterThan(0)
    for (const action of catalogue)
      for (const parameter of action.parameters) expect(parameter.description, `${action.action}.${parameter.name}`).not.toBe('')
    const recognizer = catalogue.find((a) => a.action === 'recognizer')!
    expect(recognizer.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['normalize', 'descriptorVersion']))
  })
})
