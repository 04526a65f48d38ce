import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Algorithm and layout management (spec 4.10, shapes in models/README.md). Part of the error catalogue (shared/errors/catalogue.ts). */
export const ALGORITHM_ERRORS = {
  AlgorithmNotFound: entry('7301', 'api.error.AlgorithmNotFound',
    'No algorithm with this id exists on the device.', A.QUERY_ALGORITHMS),
  AlgorithmExists: entry('7302', 'api.error.AlgorithmExists',
    'An algorithm with this id already exists: update it, or delete it first.', A.CHECK_REQUEST_PARAMETERS),
  AlgorithmInUse: entry('7303', 'api.error.AlgorithmInUse',
    'Tasks use this algorithm: cancel them before deleting or replacing it.', A.NONE),
  AlgorithmInvalid: entry('7304', 'api.error.AlgorithmInvalid',
    'The pipeline layout is not valid: see details.reason.', A.CHECK_REQUEST_PARAMETERS),
  AlgorithmPackageInvalid: entry('7305', 'api.error.AlgorithmPackageInvalid',
    'The algorithm package is not a valid zip or tar.gz package with a manifest and its model files.', A.CHECK_UPLOAD_PARAMETERS),
  AlgorithmPackageUnsafe: entry('7306', 'api.error.AlgorithmPackageUnsafe',
    'An entry of the algorithm package would leave its folder or is not a regular file.', A.CHECK_UPLOAD_PARAMETERS),
  AlgorithmPackageTooLarge: entry('7307', 'api.error.AlgorithmPackageTooLarge',
    'The algorithm package has too many entries or expands beyond the size limit.', A.CHECK_UPLOAD_PARAMETERS),
} satisfies Record<string, CatalogueEntry>
