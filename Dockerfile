# Switchboard gateway. The image's own Node 24 runs the TypeScript sources directly (type
# stripping), so there is no build stage and only production dependencies are installed.
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so source changes reuse this layer. The `node` devDependency (the Node 24
# that npm scripts use on machines without one) is left out: the image brings Node 24 itself.
# --ignore-scripts: no production dependency needs an install script (dtrace-provider, restify's
# optional native addon, is skipped and restify runs without it).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# Owned by root and read-only to the process that runs them.
COPY src/ src/
COPY bin/ bin/

USER node
EXPOSE 8080

# slim images carry no curl: ask with Node's own fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# REDIS_URL is required in the image: it carries no redis-server for the managed local mode.
CMD ["node", "src/main.ts"]
