import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Factur-X / ZUGFeRD profiles: how the XML names them (BT-24), their schema, and how a hybrid PDF declares them. */

export type ProfileName = 'MINIMUM' | 'BASIC WL' | 'BASIC' | 'EN16931' | 'EXTENDED' | 'XRECHNUNG';

export interface Profile {
  name: ProfileName;
  /** Factur-X schema set (engines/xsd/factur-x-1.07.3/Factur-X_1.07.3_<xsd>.xsd). */
  xsd: 'MINIMUM' | 'BASICWL' | 'BASIC' | 'EN16931' | 'EXTENDED';
  /** fx:ConformanceLevel in the XMP. */
  level: string;
  /** Factur-X 1.07 / ZUGFeRD 2.3: MINIMUM and BASIC WL are not full invoices, so their XML is only Data. */
  relationship: 'Alternative' | 'Data';
  /** The embedded file's name (fx:DocumentFileName). */
  fileName: string;
  /** Whether the XML is a complete EN 16931 invoice with lines (every rule applies). */
  full: boolean;
}

const P = (name: ProfileName, xsd: Profile['xsd'], level: string, full: boolean, fileName = 'factur-x.xml'): Profile => ({
  name,
  xsd,
  level,
  relationship: full ? 'Alternative' : 'Data',
  fileName,
  full,
});

export const PROFILES: Record<ProfileName, Profile> = {
  MINIMUM: P('MINIMUM', 'MINIMUM', 'MINIMUM', false),
  'BASIC WL': P('BASIC WL', 'BASICWL', 'BASIC WL', false),
  BASIC: P('BASIC', 'BASIC', 'BASIC', true),
  EN16931: P('EN16931', 'EN16931', 'EN 16931', true),
  EXTENDED: P('EXTENDED', 'EXTENDED', 'EXTENDED', true),
  // XRechnung CII may use elements beyond the EN 16931 schema subset, so it is checked against the EXTENDED one.
  XRECHNUNG: P('XRECHNUNG', 'EXTENDED', 'XRECHNUNG', true, 'xrechnung.xml'),
};

/** The profile a specification identifier (BT-24) names, including ZUGFeRD 2.0's identifiers; null when unknown. */
export function profileOf(guideline: string | undefined): Profile | null {
  const id = (guideline ?? '').trim();
  // XRechnung 2.1 and later name it urn:xeinkauf.de:kosit:xrechnung_<version>; 1.2 and 2.0 urn:xoev-de:kosit:standard:xrechnung_<version>.
  if (/#compliant#urn:(xeinkauf\.de:kosit|xoev-de:kosit:standard):xrechnung_/.test(id)) return PROFILES.XRECHNUNG;
  const byId: Record<string, ProfileName> = {
    'urn:factur-x.eu:1p0:minimum': 'MINIMUM',
    'urn:zugferd.de:2p0:minimum': 'MINIMUM',
    'urn:factur-x.eu:1p0:basicwl': 'BASIC WL',
    'urn:zugferd.de:2p0:basicwl': 'BASIC WL',
    'urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic': 'BASIC',
    'urn:cen.eu:en16931:2017#compliant#urn:zugferd.de:2p0:basic': 'BASIC',
    'urn:cen.eu:en16931:2017': 'EN16931',
    'urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended': 'EXTENDED',
    'urn:cen.eu:en16931:2017#conformant#urn:zugferd.de:2p0:extended': 'EXTENDED',
  };
  return id in byId ? PROFILES[byId[id]] : null;
}

/** Where the shipped schemas are: beside the sources, or three levels up from dist/app/invoice. */
const ENGINES_DIR =
  [new URL('../../engines/', import.meta.url), new URL('../../../engines/', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((d) => existsSync(join(d, 'xsd/factur-x-1.07.3/Factur-X_1.07.3_EN16931.xsd'))) ?? fileURLToPath(new URL('../../engines/', import.meta.url));

export const schemaPath = (p: Profile) => join(ENGINES_DIR, 'xsd/factur-x-1.07.3', `Factur-X_1.07.3_${p.xsd}.xsd`);
