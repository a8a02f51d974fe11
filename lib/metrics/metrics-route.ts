/**
 * `GET /metrics`: the service's metrics in the Prometheus text format
 * (see `service-metrics.ts`). Mounted after the bearer check: unlike
 * `/health`, it tells how loaded the service is, what fails and how the
 * process fares, which is not for anyone who can reach the port. A
 * Prometheus scrape job sends the token with `authorization: {credentials: …}`.
 */
import { Router } from "express";
import type { ServiceMetrics } from "./service-metrics.js";

export function metricsRoute(metrics: ServiceMetrics): Router {
  const router = Router();
  router.get("/metrics", async (_req, res) => {
    const { contentType, text } = await metrics.scrape();
    res.status(200).set("Content-Type", contentType).set("Cache-Control", "no-store").send(text);
  });
  return router;
}
