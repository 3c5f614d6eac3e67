import { ValidationError } from '../../errors.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { downloadDriveItem, listSharingLink, parseLink } from './graph-drive.ts';

const LABEL = 'OneDrive';
const INVALID =
  'url must be a OneDrive sharing link, like https://1drv.ms/f/c/6a1f0e3b2c4d5e6f/EgAbCdEfGhIjKlMn?e=x1Y2z3 ' +
  'or https://contoso-my.sharepoint.com/:f:/g/personal/ada_contoso_com/EgAbCdEfGhIjKlMn?e=x1Y2z3.';
/** OneDrive for work or school lives on the tenant's `-my` SharePoint host. */
const BUSINESS_HOST = /^[a-z0-9-]+-my\.sharepoint\.com$/;
/** The type segment of a sharing link: `:w:` (Word), `:f:` (folder), `:b:` (PDF), `:u:` (other)… */
const LINK_TYPE = /^:[a-z]{1,2}:$/;

/**
 * The canonical form of a OneDrive reference: a sharing link as OneDrive hands it out, on `https`,
 * with its query (some links need it) and without a fragment. Accepted: `https://1drv.ms/{type}/…`,
 * `https://onedrive.live.com/…?resid=…` (or `?id=…`), and on a work or school tenant's
 * `{tenant}-my.sharepoint.com` a sharing link (`/:w:/g/personal/…`) or a file or folder URL under
 * `/personal/{user}/…`. Throws `ValidationError`.
 */
export function canonicalOneDriveReference(reference: string): string {
  const url = parseLink(reference);
  if (!url) throw new ValidationError(INVALID);
  const host = url.hostname.toLowerCase();
  const segments = url.pathname.split('/').filter(Boolean);
  const accepted =
    (host === '1drv.ms' && segments.length >= 2 && /^[a-z]{1,2}$/.test(segments[0]!)) ||
    (host === 'onedrive.live.com' && (url.searchParams.has('resid') || url.searchParams.has('id'))) ||
    (BUSINESS_HOST.test(host) &&
      ((LINK_TYPE.test(segments[0] ?? '') && segments.length >= 3) ||
        (segments[0] === 'personal' && segments.length >= 3)));
  if (!accepted) throw new ValidationError(INVALID);
  return `https://${host}${url.pathname}${url.search}`;
}

function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  return listSharingLink(context, LABEL, canonicalOneDriveReference(reference));
}

function fetchDocument(
  _reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  return downloadDriveItem(context, LABEL, document);
}

/**
 * OneDrive (personal, work or school) through Microsoft Graph, on the owner's Microsoft connection.
 * A sharing link to a file is one document; to a folder, every file under it, subfolders included.
 * Lists PDF, DOCX, PPTX, TXT, MD and CSV files; skips other types (Excel, images, OneNote notebooks)
 * and deleted items. A document's change token is its `cTag` (the content's etag).
 */
export const onedriveConnector: Connector = {
  type: 'onedrive',
  service: 'microsoft',
  connectionOptional: false,
  parseReference: canonicalOneDriveReference,
  list,
  fetch: fetchDocument,
};
