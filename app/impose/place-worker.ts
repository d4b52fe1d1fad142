// The worker thread that draws one job's sheets (started by placePages): pdf-lib holds the event loop for seconds on long documents.
import { serveThread } from '../threads.js';
import { drawSheets, type PlaceJob } from './place.js';

serveThread<PlaceJob, void>(async (job) => drawSheets(job));
