# syntax=docker/dockerfile:1
# Build stage: dependencies and the TypeScript build.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY app ./app
COPY engines ./engines
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

# Runtime: the engines from Debian (the same list scripts/setup.sh installs), tini as PID 1, a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data
COPY scripts/apt-packages.txt /tmp/apt-packages.txt
RUN apt-get update \
 && grep -vE '^\s*(#|$)' /tmp/apt-packages.txt | xargs apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/apt-packages.txt
COPY docker/fonts.conf /etc/fonts/local.conf
RUN groupadd --system quire && useradd --system --gid quire --home-dir /home/quire --create-home quire \
 && mkdir -p /data && chown quire:quire /data
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY engines ./engines
COPY docker/healthcheck.mjs ./docker/healthcheck.mjs
USER quire
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "docker/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/app/main.js"]
