/**
 * The device's interface as types, inferred from the handlers themselves (docs/architecture.md
 * "The typed client"): `ApiRoute` is every route of functions/ (api.generated.ts, written by the
 * build from its route manifest), `ApiRequest<P>` the input its schema accepts and
 * `ApiResponse<P>` the `resData` its `handle` returns. Types only: nothing here reaches a bundle.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import type { ApiHandlers } from './api.generated.ts'

export type { ApiHandlers }
/** Every route the device serves. */
export type ApiRoute = keyof ApiHandlers

type InputOf<H> = H extends { input: infer S extends TSchema } ? Static<S> : never
type ResultOf<H> = H extends { handle(...args: never[]): infer R } ? Wire<Exclude<Awaited<R>, Response>> : never

/** A value as it travels in JSON: what `toJSON` gives (a `DataUrl` is its text, spec 2.6), recursively. */
export type Wire<T> = T extends { toJSON(): infer J } ? J
  : T extends readonly (infer U)[] ? Wire<U>[]
  : T extends object ? { [K in keyof T]: Wire<T[K]> }
  : T

/** The request body of a route: its handler's input schema (fields with defaults may be left out). */
export type ApiRequest<P extends ApiRoute> = Partial<InputOf<ApiHandlers[P]>>
/** The `resData` of a route: what its handler returns (files and streams excluded). */
export type ApiResponse<P extends ApiRoute> = ResultOf<ApiHandlers[P]>

/** A route constant checked against the handlers' route list: a typo or a removed route does not compile. */
export const route = <P extends ApiRoute>(path: P): P => path
