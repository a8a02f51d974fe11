/**
 * Node's request and response classes for an Express app, whose objects
 * are born with the app's prototypes. Express gives every request and
 * response its own prototype with `Object.setPrototypeOf`; V8 then no
 * longer shares hidden classes between them: each property added after
 * that (Express's, Node's own in `writeHead`) makes a hidden class and a
 * descriptor array for that one object, about 1 KiB each for a request
 * and a response, held for as long as a stream stays open. Born with the
 * prototype Express would set, they share one hidden class, and Express's
 * `setPrototypeOf` changes nothing.
 */
import { IncomingMessage, ServerResponse, type ServerOptions } from "node:http";
import type { Express } from "express";

export type AppBornClasses = Required<Pick<ServerOptions, "IncomingMessage" | "ServerResponse">>;

/** For `http.createServer(options, app)`; `app.request` and `app.response` become the classes' prototypes. */
export function appBornClasses(app: Express): AppBornClasses {
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse {}
  // Express's methods stay one step up the chain; Express sets exactly these prototypes, so its own step is a no-op.
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype as Express["request"];
  app.response = AppResponse.prototype as Express["response"];
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse as AppBornClasses["ServerResponse"] };
}
