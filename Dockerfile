# Switchboard gateway. The image's own Node 24 runs the TypeScript sources directly (type
# stripping), so there is no compile stage for the code; one stage builds the native addon
# (hnswlib-node, the in-process vector index) and the runtime stage gets only its result.
FROM node:24-slim AS deps
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Production dependencies only; the `node` devDependency is left out (the image brings Node 24).
RUN npm ci --omit=dev && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules/
COPY package.json package-lock.json ./
# Owned by root and read-only to the process that runs them.
COPY src/ src/
COPY bin/ bin/
COPY web/ web/
COPY assets/ assets/
# The OpenAPI document and the webhook JSON Schemas the gateway serves at /api/v1/.
COPY docs/openapi.json docs/
COPY docs/webhook-schemas/ docs/webhook-schemas/

USER node
EXPOSE 8080

# slim images carry no curl: ask with Node's own fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# REDIS_URL is required in the image: it carries no redis-server for the managed local mode.
CMD ["node", "src/main.ts"]
