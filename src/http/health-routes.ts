import type { Request, Response, Server } from 'restify';
import { sendDetail } from './http-server.ts';

/** `/healthz`: the process answers. `/readyz`: and Redis answers too. */
export function registerHealthRoutes(server: Server, redisReady: () => Promise<boolean>): void {
  server.get('/healthz', async (_req: Request, res: Response) => {
    res.send(200, { status: 'ok' });
  });
  server.get('/readyz', async (_req: Request, res: Response) => {
    if (await redisReady()) res.send(200, { status: 'ready' });
    else sendDetail(res, 503, 'Redis is not reachable.');
  });
}
