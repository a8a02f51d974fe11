/**
 * `GET /sandbox`: the stream-debugging sandbox page. Not built yet: the
 * router answers nothing, so `/sandbox` falls through to the JSON 404.
 */
import express from "express";

export function sandboxRoute(): express.Router {
  return express.Router();
}
